"""A small data root made of the first lines of ../shared/data's files, for end-to-end tests."""
import os
import shutil
from pathlib import Path

SHARED = Path(os.environ.get("DEFSENT_DATA", Path(__file__).resolve().parents[2] / "shared" / "data"))

GAUSSCSE_FILES = ["nli/snli/snli_1.0_dev.csv", "nli/snli/snli_1.0_test.csv",
                  "nli/mnli/multinli_1.0_dev_mismatched.csv", "nli/mnli/multinli_1.0_dev_matched.csv",
                  "sts/raw/SICK/SICK_test_annotated.txt", "nli/sick/SICK.txt"]


def copy_head(rel, dest_root, lines):
    """The first `lines` lines of a shared file (header included) at the same place under dest_root."""
    src, dest = SHARED / rel, Path(dest_root) / rel
    dest.parent.mkdir(parents=True, exist_ok=True)
    with open(src, "rb") as f:
        head = b"".join(line for _, line in zip(range(lines), f))
    dest.write_bytes(head)
    Path(dest_root, "EXCERPT").touch()  # cut copies: the readers read them as they are
    return dest


def gausscse_root(dest_root, triplets=33, pairs=61):
    """What a GaussCSE run reads: NLI dev/test heads, SICK, and `triplets` training triplets."""
    for rel in GAUSSCSE_FILES:
        copy_head(rel, dest_root, pairs if "SICK.txt" not in rel else 2000)
    copy_head("nli/train/triplets.tsv", dest_root, triplets + 1)
    return Path(dest_root)


def copy_tree(rel, dest_root):
    """A whole shared folder, copied."""
    shutil.copytree(SHARED / rel, Path(dest_root) / rel)
    return Path(dest_root) / rel


def tiny_pst_setup(folder):
    """A tiny randomly initialised BERT (offline vocabulary) saved under folder/tiny, and an
    80-definition, 40-entry DefSent+ dataset: what a PST loop test trains in seconds."""
    import torch
    from transformers import AutoTokenizer, BertConfig, BertModel

    from defsent_lite.runtime import models
    from defsent_lite.data import entries
    tok = AutoTokenizer.from_pretrained(models.resolve("offline"))
    torch.manual_seed(0)
    BertModel(BertConfig(vocab_size=tok.vocab_size, hidden_size=16, num_hidden_layers=1, num_attention_heads=2,
                         intermediate_size=32)).save_pretrained(Path(folder) / "tiny")
    tok.save_pretrained(Path(folder) / "tiny")
    pairs = [(f"entry{i % 40}", f"definition number {i} of a thing {'very ' * (i % 5)}small") for i in range(80)]
    names, ids, defs, _ = entries.entry_dataset(pairs)
    return str(Path(folder) / "tiny"), dict(names=names, ids=ids, definitions=defs)
