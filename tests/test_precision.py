"""Issue 14, point 5 (GPU precision): bf16 only where the GPU has it natively, fp16 with loss
scaling on older GPUs, fp32 on CPU; logits over the vocabulary or all entries in fp32."""
import contextlib

import pytest
import torch
from transformers import BertConfig, BertForMaskedLM, BertModel

from defsent_lite import defsent, defsentplus, forward


@pytest.mark.parametrize("capability, dtype, name", [
    ((7, 5), torch.float16, "fp16 with loss scaling"),   # T4: bf16 only emulated
    ((7, 0), torch.float16, "fp16 with loss scaling"),   # V100
    ((8, 0), torch.bfloat16, "bf16"),                    # A100
    ((9, 0), torch.bfloat16, "bf16"),                    # H100
])
def test_amp_dtype_follows_the_compute_capability(monkeypatch, capability, dtype, name):
    monkeypatch.setattr(torch.cuda, "get_device_capability", lambda device=None: capability)
    assert forward.amp_dtype(torch.device("cuda")) == dtype
    assert forward.precision_name("cuda") == name


def test_cpu_runs_in_fp32():
    assert forward.amp_dtype("cpu") is None and forward.precision_name("cpu") == "fp32"
    assert isinstance(forward.autocast_for(torch.device("cpu")), contextlib.nullcontext)


def tiny(cls):
    torch.manual_seed(0)
    return cls(BertConfig(vocab_size=60, hidden_size=16, num_hidden_layers=1, num_attention_heads=2,
                          intermediate_size=32, max_position_embeddings=32)).eval()


def test_vocabulary_and_entry_logits_stay_fp32_under_low_precision_autocast():
    batch = dict(input_ids=torch.tensor([[1, 5, 7, 2]]), attention_mask=torch.ones(1, 4, dtype=torch.long))
    mlm = tiny(BertForMaskedLM)
    head = defsent.word_prediction_head(mlm)
    encoder = tiny(BertModel)
    space = torch.randn(9, 16)
    with torch.autocast("cpu", dtype=torch.bfloat16):
        assert head(torch.randn(1, 16)).dtype == torch.bfloat16  # what autocast alone would give
        assert encoder.pooler.dense(torch.randn(1, 16)).dtype == torch.bfloat16
        assert defsent.word_logits(mlm, head, batch, "mean").dtype == torch.float32
        assert defsentplus.entry_logits(encoder, batch, "cls", space).dtype == torch.float32
