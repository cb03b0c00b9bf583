"""Pre-train the repository's own raw masked language model (mini-BERT) from random weights.

All three papers start from a raw masked LM with its word-prediction head (BERT, RoBERTa); none is
at hand offline, so the CPU scales start from this one: BERT's uncased WordPiece vocabulary and
architecture (BertForMaskedLM: a transform + LayerNorm + decoder tied to the word embeddings),
small enough to pre-train on a 2-core CPU and to commit (safetensors, under 25 MB).

What it reads (`corpus`), chosen so that it cannot inflate an evaluation:
- WordNet 3.0 glosses and their quoted examples, Oxford (valid + test) definitions and examples,
  the offline NLI training triplets: nothing else;
- minus every text of a word in DefSent's dev or test split (the split every DefSent notebook
  makes, `dictionary.defsent_dataset`): a synset goes when any of its lemmas is such a word, so a
  test word's definition is never seen (DefSent's test predicts the word from it);
- minus every sentence found in an evaluation file (STS12-16, STS-B, SICK, SentEval's seven
  tasks, SNLI, MultiNLI, SICK NLI), compared lower-cased on letters and digits only (STS's OnWN
  subsets are WordNet glosses: they are dropped here).
A seeded 2,000 of the remaining sentences are held out: the masked-token accuracy on them is the
card's; the dev words' texts, never trained on either, give a second held-out accuracy.

    python tools/pretrain_mini_bert.py --out defsent_lite/runtime/mini_bert   # about 80 min, 2 cores
    (on a GPU when one is present: DEFSENT_DEVICE=cpu keeps it on the CPU)
    python tools/pretrain_mini_bert.py --probe 30      # seconds a step, nothing written

Then `python tools/mini_bert_card.py` measures the card's numbers (docs/mini_bert.md).
"""

import argparse
import csv
import json
import platform
import random
import re
import sys
import time
from pathlib import Path

import torch
import torch.nn.functional as F
from tqdm import tqdm
from transformers import BertConfig, BertForMaskedLM

from defsent_lite.data import dictionary, dictionary_readers
from defsent_lite.runtime import config, models

SEED = 0
HELD_OUT = 2000
MAX_TOKENS = 64  # a definition or example: 99.7% are shorter
ARCH = dict(hidden_size=128, num_hidden_layers=4, num_attention_heads=2, intermediate_size=512)
RECIPE = dict(batch_size=128, lr=1e-3, warmup=0.04, weight_decay=0.01, mask_prob=0.15)


# ---------------------------------------------------------------- what it may read


def normalised(text):
    """Lower-cased letters and digits, single spaces: how a sentence is matched to the evaluation
    files (punctuation, tokenisation and case differ between copies of one sentence)."""
    return " ".join(re.findall(r"[a-z0-9]+", text.lower()))


def evaluation_sentences(root):
    """Every field of every line of the evaluation files (normalised): what pre-training must never
    read. Over-inclusive on purpose (labels and scores are fields too)."""
    files = [p for sub in ("sts", "senteval") for p in (root / sub).rglob("*") if p.is_file()]
    files += [p for sub in ("snli", "mnli", "sick") for p in (root / "nli" / sub).rglob("*")]
    seen = set()
    for path in files:
        if path.suffix in (".gz", ".zip", ".md") or not path.is_file():
            continue
        for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
            fields = line.split("\t")
            if path.suffix == ".csv" and len(fields) == 1:
                fields = next(csv.reader([line]), [])
            fields += [line, line.split(" ", 1)[-1]]  # TREC: "LABEL:sub question"
            seen.update(normalised(f) for f in fields)
    seen.discard("")
    return seen


def wordnet_texts(folder):
    """(lemmas, gloss, examples) of every synset in WordNet's data files."""
    for pos in dictionary_readers.WORDNET_POS_FILES:
        for line in open(Path(folder) / f"data.{pos}", encoding="utf-8"):
            if line[0].isspace():
                continue
            lemmas = {w for w, _ in dictionary_readers.synset_line_pairs(line)}
            gloss = line.strip().split("|", 1)[1]
            examples = [
                e.strip('"').strip() for e in dictionary_readers._QUOTED_EXAMPLE.findall(gloss)
            ]
            definition = dictionary_readers._QUOTED_EXAMPLE.sub("", gloss).strip().strip("; ")
            yield lemmas, definition, examples


def oxford_texts(root):
    """(word, definition, example) rows of the Oxford TSVs at hand, detokenised as DefSent reads
    them."""
    for split in ("valid", "test"):
        path = root / "dictionary" / "oxford" / f"{split}.tsv"
        for row in list(csv.reader(open(path, encoding="utf-8"), delimiter="\t"))[1:]:
            word, definition, example = (row + ["", ""])[:3]
            yield word.strip(), dictionary.detokenise(definition), dictionary.detokenise(example)


def corpus():
    """(pre-training sentences, dev-word sentences, counts): see the module's docstring."""
    root = config.data_root()
    # DefSent's split is made over every word, single-token or not: every dev/test word counts
    words = dictionary.split_by_word(_dictionary_pairs())
    held = {s: {w for w, _ in words[s]} for s in ("dev", "test")}
    counts, train, dev_texts = {}, [], []
    for lemmas, definition, examples in wordnet_texts(dictionary_readers.wordnet_folder()):
        texts = [definition, *examples]
        if lemmas & held["test"]:
            counts["wordnet_test_word"] = counts.get("wordnet_test_word", 0) + len(texts)
        elif lemmas & held["dev"]:
            dev_texts += texts
        else:
            train += texts
    for word, definition, example in oxford_texts(root):
        texts = [t for t in (definition, example) if t]
        if word in held["test"]:
            counts["oxford_test_word"] = counts.get("oxford_test_word", 0) + len(texts)
        elif word in held["dev"]:
            dev_texts += texts
        else:
            train += texts
    nli = root / "nli" / "train" / "triplets.tsv"
    rows = list(csv.reader(open(nli, encoding="utf-8"), delimiter="\t", quoting=csv.QUOTE_NONE))[1:]
    train += [s for r in rows for s in r[:3]]
    evaluation = evaluation_sentences(root)
    counts["read"] = len(train)
    unique, out = set(), []
    for s in train:
        key = normalised(s)
        if not key or key in unique:
            continue
        unique.add(key)
        if key in evaluation:
            counts["in_an_evaluation_file"] = counts.get("in_an_evaluation_file", 0) + 1
            continue
        out.append(s)
    counts["unique_kept"] = len(out)
    dev_texts = [s for s in dict.fromkeys(dev_texts) if normalised(s) not in evaluation]
    counts["dev_word_texts"] = len(dev_texts)
    return out, dev_texts, counts


def _dictionary_pairs():
    """Every (word, definition) pair DefSent's split is made over (before its vocabulary filter)."""
    pairs, _ = dictionary_readers.oxford_pairs()
    pairs = dictionary.detokenised(pairs) + dictionary_readers.wordnet_definitions()
    return dictionary_readers.merge_entries(pairs, dedupe=False)


# ---------------------------------------------------------------- masked-token training


def tokenized(tokenizer, sentences):
    """Token ids of each sentence, [CLS] ... [SEP], cut at MAX_TOKENS."""
    return tokenizer(sentences, truncation=True, max_length=MAX_TOKENS)["input_ids"]


def length_batches(ids, batch_size, rng):
    """One epoch of batches of similar length (little padding), in a seeded random order."""
    order = list(range(len(ids)))
    rng.shuffle(order)
    chunk = batch_size * 50
    batches = []
    for start in range(0, len(order), chunk):
        part = sorted(order[start : start + chunk], key=lambda i: len(ids[i]))
        batches += [part[i : i + batch_size] for i in range(0, len(part), batch_size)]
    rng.shuffle(batches)
    return batches


def pad(ids, rows, pad_id):
    """[B, T] input ids and attention mask of the rows, padded to the longest."""
    width = max(len(ids[i]) for i in rows)
    x = torch.full((len(rows), width), pad_id)
    for r, i in enumerate(rows):
        x[r, : len(ids[i])] = torch.tensor(ids[i])
    return x, (x != pad_id).long()


def mask_tokens(x, attention, tokenizer, generator, prob):
    """BERT's masking: `prob` of the real tokens ([CLS]/[SEP] never) are targets; of those 80%
    become [MASK], 10% a random token, 10% stay. -> (masked ids, target positions [M, 2], targets)"""
    special = (x == tokenizer.cls_token_id) | (x == tokenizer.sep_token_id) | (attention == 0)
    chosen = (torch.rand(x.shape, generator=generator) < prob) & ~special
    targets = x[chosen]
    roll = torch.rand(x.shape, generator=generator)
    masked = x.clone()
    masked[chosen & (roll < 0.8)] = tokenizer.mask_token_id
    swap = chosen & (roll >= 0.8) & (roll < 0.9)
    masked[swap] = torch.randint(999, tokenizer.vocab_size, (int(swap.sum()),), generator=generator)
    return masked, chosen, targets


def masked_logits(model, masked, attention, chosen):
    """Vocabulary logits at the target positions only (the MLM head on [M, d], not [B, T, d]: the
    decoder over 30,522 words is most of a small model's cost)."""
    on = lambda t: t.to(model.device)  # noqa: E731  (the masks are drawn on the CPU: one stream)
    h = model.bert(input_ids=on(masked), attention_mask=on(attention)).last_hidden_state
    return model.cls(h[on(chosen)])


@torch.no_grad()
def masked_accuracy(model, tokenizer, ids, seed=1, batch_size=256):
    """Share of masked tokens the model predicts exactly (the same seeded masking every call)."""
    was_training = model.training
    model.eval()
    generator = torch.Generator().manual_seed(seed)
    right = total = 0
    for start in range(0, len(ids), batch_size):
        x, attention = pad(
            ids, range(start, min(start + batch_size, len(ids))), tokenizer.pad_token_id
        )
        masked, chosen, targets = mask_tokens(
            x, attention, tokenizer, generator, RECIPE["mask_prob"]
        )
        predicted = masked_logits(model, masked, attention, chosen).argmax(-1).cpu()
        right += int((predicted == targets).sum())
        total += len(targets)
    model.train(was_training)
    return right / total


def new_model(tokenizer):
    """BertForMaskedLM with BERT's vocabulary, ARCH's size, seeded random weights."""
    torch.manual_seed(SEED)
    cfg = BertConfig(vocab_size=tokenizer.vocab_size, max_position_embeddings=512, **ARCH)
    return BertForMaskedLM(cfg)


def pretrain(model, tokenizer, train_ids, held_ids, steps, eval_every=500, log=None):
    """AdamW with linear warm-up and decay; masked-token cross-entropy; the held-out accuracy every
    `eval_every` steps. -> log {step: ..., loss: ..., held_out_accuracy: ...}"""
    r = RECIPE
    rng, generator = random.Random(SEED), torch.Generator().manual_seed(SEED)
    decay = [p for n, p in model.named_parameters() if p.dim() > 1]
    rest = [p for n, p in model.named_parameters() if p.dim() <= 1]
    optimizer = torch.optim.AdamW(
        [dict(params=decay, weight_decay=r["weight_decay"]), dict(params=rest, weight_decay=0.0)],
        lr=r["lr"],
        betas=(0.9, 0.98),
        eps=1e-6,
    )
    warmup = max(1, int(r["warmup"] * steps))
    schedule = torch.optim.lr_scheduler.LambdaLR(
        optimizer, lambda s: min((s + 1) / warmup, max(0.0, (steps - s) / (steps - warmup)))
    )
    log = log or dict(step=[], loss=[], eval_step=[], held_out_accuracy=[])
    batches, step, running, since, t0 = [], 0, 0.0, 0, time.time()
    model.train()
    bar = tqdm(total=steps, desc="pre-training", mininterval=10)
    while step < steps:
        if not batches:
            batches = length_batches(train_ids, r["batch_size"], rng)
        x, attention = pad(train_ids, batches.pop(), tokenizer.pad_token_id)
        masked, chosen, targets = mask_tokens(x, attention, tokenizer, generator, r["mask_prob"])
        logits = masked_logits(model, masked, attention, chosen)
        loss = F.cross_entropy(logits, targets.to(logits.device))
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step(), schedule.step(), optimizer.zero_grad(set_to_none=True)
        step, since = step + 1, since + 1
        running = running + loss.detach()  # summed where it is: no wait for the device each step
        bar.update()
        if step % 100 == 0 or step == steps:  # the mean of the last 100 steps, checked finite
            if not torch.isfinite(running):
                raise FloatingPointError(
                    f"pre-training loss {float(running)} summed over steps "
                    f"{step - since + 1}-{step} (lr {r['lr']})"
                )
            log["step"].append(step), log["loss"].append(float(running) / since)
            running, since = 0.0, 0
        if step % eval_every == 0 or step == steps:
            log["eval_step"].append(step)
            log["held_out_accuracy"].append(masked_accuracy(model, tokenizer, held_ids))
            bar.set_postfix(acc=f"{log['held_out_accuracy'][-1]:.3f}", loss=f"{loss.item():.3f}")
    bar.close()
    log["seconds"] = time.time() - t0
    return log


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--out", type=Path, help="the model folder to write (save_pretrained)")
    p.add_argument("--steps", type=int, default=24000)
    p.add_argument("--probe", type=int, default=0, help="time this many steps, write nothing")
    args = p.parse_args(argv)
    torch.set_num_threads(max(1, torch.get_num_threads()))
    tokenizer = models.bert_vocabulary()
    sentences, dev_texts, counts = corpus()
    rng = random.Random(SEED)
    rng.shuffle(sentences)
    held, train = sentences[:HELD_OUT], sentences[HELD_OUT:]
    train_ids, held_ids = tokenized(tokenizer, train), tokenized(tokenizer, held)
    counts.update(
        train_sentences=len(train),
        held_out_sentences=len(held),
        train_tokens=sum(len(i) - 2 for i in train_ids),
        train_words=sum(len(s.split()) for s in train),
    )
    print(json.dumps(counts))
    model = new_model(tokenizer).to(config.device())  # DEFSENT_DEVICE, else cuda when present
    if args.probe:
        t0 = time.time()
        pretrain(model, tokenizer, train_ids, held_ids[:200], args.probe, eval_every=10**9)
        print(f"{(time.time() - t0) / args.probe:.3f} s a step at batch {RECIPE['batch_size']}")
        return
    log = pretrain(model, tokenizer, train_ids, held_ids, args.steps)
    log["dev_word_accuracy"] = masked_accuracy(model, tokenizer, tokenized(tokenizer, dev_texts))
    args.out.mkdir(parents=True, exist_ok=True)
    model.save_pretrained(args.out)  # model.safetensors + config.json
    tokenizer.save_pretrained(args.out)
    record = dict(
        counts=counts,
        arch=ARCH,
        recipe=RECIPE,
        seed=SEED,
        steps=args.steps,
        max_tokens=MAX_TOKENS,
        parameters=sum(p.numel() for p in model.parameters()),
        machine=f"{platform.machine()}, {torch.get_num_threads()} threads, torch {torch.__version__}",
        date=time.strftime("%Y-%m-%d"),
        **log,
    )
    (args.out / "pretraining.json").write_text(json.dumps(record, indent=1))
    print(
        f"held-out masked-token accuracy {log['held_out_accuracy'][-1]:.3f}, dev words "
        f"{log['dev_word_accuracy']:.3f}, {log['seconds'] / 60:.1f} min -> {args.out}"
    )


if __name__ == "__main__":
    sys.exit(main())
