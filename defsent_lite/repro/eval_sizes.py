"""How much an evaluation encodes: the sentences of one STS or SentEval pass under a scale's
caps, the mean tokens of an evaluation sentence, and the plan of an untrained encoder (encoding
only). Apart from `budget` so that a plan without STS or SentEval (GaussCSE's) reads none of their
data."""

from defsent_lite import encode
from defsent_lite.data import eval_readers
from defsent_lite.evaluation import sts
from defsent_lite.repro.plans import (
    ENCODE_SAMPLE,
    Plan,
    device_name,
    parameters,
    row_tokens,
    seconds_per_call,
    spaced_sample,
)
from defsent_lite.runtime import models


def eval_sentence_tokens(tokenizer, data_dir=None):
    """Mean tokens of an evaluation sentence, counted on STS-B test (the stand-in for every STS and
    SentEval sentence in a plan's FLOPs)."""
    s1, s2, _ = eval_readers.load_sts("STSB", data_dir)
    return row_tokens(tokenizer, s1 + s2)


def sts_sentences(data_dir=None, max_pairs=None):
    """Sentences one STS evaluation encodes (every task, both sides)."""
    return sum(
        2 * len(gold) for _, _, gold in sts.load_tasks(None, data_dir, max_pairs=max_pairs).values()
    )


def transfer_sentences(data_dir=None, settings=None):
    """Sentences one SentEval transfer evaluation encodes (MR, CR, SUBJ, MPQA, SST-2, TREC, MRPC),
    under the caps of `settings` (`senteval.transfer_settings`; None: all)."""
    settings = settings or {}
    train_cap, eval_cap = settings.get("max_examples"), settings.get("max_eval")

    def capped(n, split):
        cap = train_cap if split == "train" else eval_cap
        return min(n, cap) if cap else n

    n = sum(
        capped(len(eval_readers.load_binary_task(t, data_dir)[0]), "train")
        for t in eval_readers.BINARY_FILES
    )
    n += sum(capped(len(v[0]), k) for k, v in eval_readers.load_sst2(data_dir).items())
    n += sum(capped(len(v[0]), k) for k, v in eval_readers.load_trec(data_dir).items())
    return n + sum(2 * capped(len(v[0]), k) for k, v in eval_readers.load_mrpc(data_dir).items())


def encoding_plan(what, model_name, encoded, data_dir=None, batch=64):
    """A plan without training (untrained encoders): the time to encode `encoded` sentences, timed
    on an evenly spaced sample of STS-B test encoded as evaluation does (length-sorted, fp32)."""
    model, tokenizer = models.load(model_name)
    s1, s2, _ = eval_readers.load_sts("STSB", data_dir)
    sentences = spaced_sample(sorted(set(s1 + s2)), ENCODE_SAMPLE)
    device = next(model.parameters()).device

    def infer():
        encode.encode(model, tokenizer, sentences, batch_size=batch, progress=False)

    return Plan(
        what,
        0,
        0,
        encoded,
        0.0,
        seconds_per_call(infer, device, warmup=1, repeats=1) * batch / len(sentences),
        batch,
        device_name(device),
        parameters(model),
        0.0,
        encoded * eval_sentence_tokens(tokenizer, data_dir),
    )
