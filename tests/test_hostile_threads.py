"""Issue 85, case 6: two threads encoding one model. eval_mode switched the model per call, so a
block ending in one thread put the model back in training mode (dropout on) while another thread
encoded, and the model could be left in eval mode."""
import threading

import torch

from defsent_lite import forward


def test_a_block_ending_in_one_thread_leaves_the_other_threads_block_in_eval():
    model = torch.nn.Linear(2, 2).train()
    a_inside, b_inside, seen = threading.Event(), threading.Event(), []

    def first():
        with forward.eval_mode(model):
            a_inside.set()
            b_inside.wait(10)

    def second():
        a_inside.wait(10)
        with forward.eval_mode(model):
            b_inside.set()
            a.join(10)   # the first block has ended
            seen.append(model.training)

    a, b = threading.Thread(target=first), threading.Thread(target=second)
    a.start(), b.start()
    a.join(10), b.join(10)
    assert seen == [False], "the second thread encoded in training mode"
    assert model.training, "the model was left in eval mode"
    with forward.eval_mode(model):   # one thread, nested: as before
        with forward.eval_mode(model):
            assert not model.training
        assert not model.training
    assert model.training
