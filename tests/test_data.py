import pytest

from defsent_lite.data import dictionary_readers, nli_readers, readers, eval_readers, sick

STS_COUNTS = {"STS12": 3108, "STS13": 1500, "STS14": 3750, "STS15": 3000, "STS16": 1186, "STSB": 1379, "SICKR": 4927}


@pytest.mark.parametrize("variant", ["raw", "senteval"])
def test_sts_pair_counts_match_sources(variant):
    for task, n in STS_COUNTS.items():
        s1, s2, gold = eval_readers.load_sts(task, variant=variant)
        assert len(s1) == len(s2) == len(gold) == n, task


def test_raw_sts16_keeps_two_sentence_fields_and_sick_strips_crlf():
    s1, s2, _ = eval_readers.load_sts("STS16")
    assert not any("\t" in s for s in s1 + s2)
    rows = sick.read_sick(eval_readers.config.data_root() / "sts/raw/SICK/SICK_test_annotated.txt")
    assert {r["label"] for r in rows} == {"neutral", "entailment", "contradiction"}


def make_sts_root(tmp_path, input_lines, gold_lines):
    d = tmp_path / "sts" / "raw" / "STS13"
    d.mkdir(parents=True)
    (tmp_path / eval_readers.EXCERPT).touch()  # not the pinned files: read as they are
    for name in eval_readers.sources.STS_SUBSETS["STS13"]:
        (d / f"STS.input.{name}.txt").write_text("a\tb\n")
        (d / f"STS.gs.{name}.txt").write_text("1.0\n")
    (d / "STS.input.FNWN.txt").write_text("".join(input_lines))
    (d / "STS.gs.FNWN.txt").write_text("".join(gold_lines))
    return tmp_path


def test_malformed_sts_line_names_file_and_line(tmp_path):
    lines = ["x\ty\n"] * 41 + ["no tab here\n"]
    root = make_sts_root(tmp_path, lines, ["2.0\n"] * 42)
    with pytest.raises(ValueError, match=r"STS\.input\.FNWN\.txt:42"):
        eval_readers.load_sts("STS13", data_dir=root)


def test_bad_gold_and_empty_gold(tmp_path):
    root = make_sts_root(tmp_path, ["x\ty\n", "p\tq\n"], ["\n", "1.5\n"])
    s1, s2, gold = eval_readers.load_sts("STS13", data_dir=root)
    assert s1[0] == "p" and gold[0] == 1.5 and len(gold) == 3  # empty gold dropped
    (root / "sts/raw/STS13/STS.gs.FNWN.txt").write_text("1\nabc\n")
    with pytest.raises(ValueError, match=r"STS\.gs\.FNWN\.txt:2"):
        eval_readers.load_sts("STS13", data_dir=root)


def test_missing_root_says_how_to_get_data(tmp_path):
    with pytest.raises(readers.DataMissing, match="DEFSENT_DATA.*download"):
        eval_readers.load_sts("STS12", data_dir=tmp_path / "nowhere")


def test_transfer_counts():
    assert [len(eval_readers.load_binary_task(t)[0]) for t in eval_readers.BINARY_FILES] == [10662, 3775, 10000, 10606]
    sst = eval_readers.load_sst2()
    assert [len(sst[s][0]) for s in ("train", "dev", "test")] == [67349, 872, 1821]
    trec = eval_readers.load_trec()
    assert len(trec["train"][0]) == 5452 and len(trec["test"][0]) == 500
    assert [trec["test"][1].count(i) for i in range(6)] == [9, 138, 94, 65, 81, 113]
    mrpc = eval_readers.load_mrpc()
    assert len(mrpc["train"][2]) == 4076 and sum(mrpc["test"][2]) == 1147


def test_nli_sets_and_malformed_csv(tmp_path):
    rows = nli_readers.load_nli("snli_test")
    assert len(rows) == 10000 and sum(r["label"] == "entailment" for r in rows) == 3368
    assert sum(r["label"] == "entailment" for r in nli_readers.load_nli("sick_test")) == 1414
    bad = tmp_path / "bad.csv"
    bad.write_text("pairID,sentence1,sentence2,label\n1,a,b,entailment\n2,a,b,maybe\n")
    with pytest.raises(ValueError, match=r"bad\.csv:3"):
        nli_readers.read_nli_csv(bad)


def test_dictionaries(tmp_path):
    ox = dictionary_readers.load_oxford()
    assert set(ox) == {"valid", "test"} and len(ox["valid"]) == len(ox["test"]) == 12232
    f = tmp_path / "train.txt"
    f.write_text("revitalize%oxford.3\tpos\toxford\tgive new life to\t[]\t[]\nbroken line\n")
    with pytest.raises(ValueError, match=r"train\.txt:2"):
        dictionary_readers.read_ishiwatari(f)
    f.write_text("revitalize%oxford.3\tpos\toxford\tgive new life to\t[]\t[]\n")
    assert dictionary_readers.read_ishiwatari(f) == [("revitalize", "give new life to")]


def test_wordnet_data_files_read_as_nltk_reads_them():
    """Every 25th synset of each data file (and the hand-picked cases) against nltk's reader: the
    same lemmas (syntactic markers such as "(ip)" dropped) and the gloss without its examples."""
    import nltk
    from nltk.corpus import wordnet as wn
    folder = dictionary_readers.wordnet_folder()
    assert folder is not None, "WordNet's data files not found under the data root or NLTK_DATA"
    if str(folder.parent.parent) not in nltk.data.path:
        nltk.data.path.insert(0, str(folder.parent.parent))
    checked = 0
    for pos, letter in zip(dictionary_readers.WORDNET_POS_FILES, "arnv"):
        lines = [l for l in (folder / f"data.{pos}").read_text(encoding="utf-8").splitlines(True) if not l[0].isspace()]
        for line in lines[::25]:
            synset = wn.synset_from_pos_and_offset(letter, int(line.split()[0]))
            assert dictionary_readers.synset_line_pairs(line) == [(n.replace("_", " ").lower(), synset.definition())
                                                    for n in synset.lemma_names()], line[:60]
            checked += 1
    assert checked > 4000
    galore = next(l for l in (folder / "data.adj").read_text(encoding="utf-8").splitlines() if " s 01 galore(ip) " in l)
    assert dictionary_readers.synset_line_pairs(galore) == [("galore", "in great numbers")]   # marker and quoted example dropped


def test_a_malformed_wordnet_line_names_file_and_line(tmp_path):
    header = "  1 This software and database is being provided\n"
    for pos in dictionary_readers.WORDNET_POS_FILES:
        (tmp_path / f"data.{pos}").write_text(header + "00001740 03 n 01 entity 0 000 | that which exists\n")
    assert dictionary_readers.read_wordnet_data_files(tmp_path)[:1] == [("entity", "that which exists")]
    (tmp_path / "data.noun").write_text(header + "00001740 03 n 01 entity 0 000 that which exists\n")
    with pytest.raises(ValueError, match=r"data\.noun:2: not a WordNet synset line"):
        dictionary_readers.read_wordnet_data_files(tmp_path)
