"""Issue 13, point 8: every reader error names file and line; nothing malformed is read silently."""
import re

import pytest

from defsent_lite.data import dictionary_readers, nli_readers, readers, eval_readers, sick

SICK_HEADER = "pair_ID\tsentence_A\tsentence_B\trelatedness_score\tentailment_judgment\n"
SICK_FULL_HEADER = ("pair_ID\tsentence_A\tsentence_B\tentailment_label\trelatedness_score\tentailment_AB\tentailment_BA\t"
                    "sentence_A_original\tsentence_B_original\tsentence_A_dataset\tsentence_B_dataset\tSemEval_set\n")
SICK_FULL_ROW = "1\tA man runs\tA person runs\tENTAILMENT\t4.5\tA_entails_B\tB_neutral_A\tx\ty\tF\tF\tTEST\n"
MRPC_HEADER = "\ufeffQuality\t#1 ID\t#2 ID\t#1 String\t#2 String\n"
NLI_HEADER = "pairID,sentence1,sentence2,label\n"
TRIPLET_HEADER = "premise\tentailment\tcontradiction\tsource\n"
STSB_ROW = "main-captions\tMSRvid\t2012test\t0001\t{}\tA man plays.\tA man sings.\n"


def sts_subset(tmp_path, inputs, golds):
    (tmp_path / "in.txt").write_bytes(inputs)
    (tmp_path / "gs.txt").write_bytes(golds)
    return eval_readers.read_sts_subset(tmp_path / "in.txt", tmp_path / "gs.txt")


def one_file(reader, name="f.txt"):
    def read(tmp_path, content):
        path = tmp_path / name
        path.write_bytes(content if isinstance(content, bytes) else content.encode())
        return reader(path)
    return read


# (case, read(tmp_path, content), content, the error must match: file name and line)
BAD = [
    ("latin-1 byte in an STS input", lambda t, c: sts_subset(t, c, b"3.0\n2.0\n"), b"a\tb\ncaf\xe9\tx\n", r"in\.txt:2: byte 0xe9"),
    ("NaN gold", lambda t, c: sts_subset(t, b"a\tb\nc\td\n", c), b"3.0\nnan\n", r"gs\.txt:2: gold score 'nan' is not finite"),
    ("inf gold", lambda t, c: sts_subset(t, b"a\tb\nc\td\n", c), b"inf\n1.0\n", r"gs\.txt:1: gold score 'inf'"),
    ("extra STS column", lambda t, c: sts_subset(t, c, b"3.0\n2.0\n"), b"a\tb\nc\td\te\n", r"in\.txt:2: expected 2 tab-separated fields, got 3"),
    ("empty STS sentence", lambda t, c: sts_subset(t, c, b"3.0\n"), b"a\t \n", r"in\.txt:1: empty sentence"),
    ("empty STS file", lambda t, c: sts_subset(t, c, b""), b"", r"in\.txt: the file is empty"),
    ("STS only empty golds", lambda t, c: sts_subset(t, b"a\tb\n", c), b"\n", r"gs\.txt: no data lines"),
    ("NaN STS-B score", one_file(eval_readers.read_stsb), STSB_ROW.format("NaN"), r"f\.txt:1: score 'NaN' is not finite"),
    ("latin-1 byte in STS-B", one_file(eval_readers.read_stsb), STSB_ROW.format("1.0").encode() + b"\xff\n", r"f\.txt:2: byte 0xff"),
    ("SICK without header", one_file(sick.read_sick), "1\tA\tB\t4.5\tNEUTRAL\n", r"f\.txt:1: expected a header"),
    ("SICK header only", one_file(sick.read_sick), SICK_HEADER, r"f\.txt: no data lines"),
    ("SICK NaN relatedness", one_file(sick.read_sick), SICK_HEADER + "1\tA\tB\tnan\tNEUTRAL\n", r"f\.txt:2: relatedness"),
    ("SICK unknown label", one_file(sick.read_sick), SICK_HEADER + "1\tA\tB\t4.5\tMAYBE\n", r"f\.txt:2: label 'MAYBE'"),
    ("SICK.txt without header", one_file(nli_readers.read_sick_full), SICK_FULL_ROW, r"f\.txt:1: expected a header"),
    ("SICK.txt bad direction", one_file(nli_readers.read_sick_full), SICK_FULL_HEADER + SICK_FULL_ROW.replace("B_neutral_A", "B?A"),
     r"f\.txt:2: direction label"),
    ("NLI unknown label", one_file(nli_readers.read_nli_csv, "f.csv"), NLI_HEADER + "1,A man.,A person.,maybe\n", r"f\.csv:2: expected 4 fields"),
    ("NLI empty premise", one_file(nli_readers.read_nli_csv, "f.csv"), NLI_HEADER + "1, ,A person.,entailment\n", r"f\.csv:2: empty sentence"),
    ("NLI latin-1 byte", one_file(nli_readers.read_nli_csv, "f.csv"), NLI_HEADER.encode() + b"1,caf\xe9,A.,neutral\n", r"f\.csv:2: byte 0xe9"),
    ("NLI header only", one_file(nli_readers.read_nli_csv, "f.csv"), NLI_HEADER, r"f\.csv: no data lines"),
    ("SimCSE latin-1 byte", one_file(nli_readers.read_simcse_nli, "f.csv"), b"sent0,sent1,hard_neg\na,b,c\nd,\xe9,f\n", r"f\.csv:3: byte 0xe9"),
    ("SimCSE empty field", one_file(nli_readers.read_simcse_nli, "f.csv"), "sent0,sent1,hard_neg\na,,c\n", r"f\.csv:2: expected 3 non-empty"),
    ("triplets without header", one_file(nli_readers.read_triplets), "a\tb\tc\tsrc\n", r"f\.txt:1: expected a header"),
    ("triplets header only", one_file(nli_readers.read_triplets), TRIPLET_HEADER, r"f\.txt: no data lines"),
    ("Oxford empty word", one_file(dictionary_readers.read_oxford_tsv), "word\tdefinition\texample\n\ta thing\t\n", r"f\.txt:2: empty word"),
    ("Oxford header only", one_file(dictionary_readers.read_oxford_tsv), "word\tdefinition\texample\n", r"f\.txt: no data lines"),
    ("Ishiwatari empty word", one_file(dictionary_readers.read_ishiwatari), "%oxford.1\t0\t0\ta thing\n", r"f\.txt:1: empty word"),
    ("Ishiwatari latin-1 byte", one_file(dictionary_readers.read_ishiwatari), b"w%oxford.1\t0\t0\ta th\xefng\n", r"f\.txt:1: byte 0xef"),
    # issue 36: what the formats forbid
    ("STS gold above 5", lambda t, c: sts_subset(t, b"a\tb\nc\td\n", c), b"3.0\n7.5\n", r"gs\.txt:2: gold score '7\.5' is outside 0-5"),
    ("STS gold below 0", lambda t, c: sts_subset(t, b"a\tb\n", c), b"-3\n", r"gs\.txt:1: gold score '-3' is outside 0-5"),
    ("STS-B score above 5", one_file(eval_readers.read_stsb), STSB_ROW.format("5.5"), r"f\.txt:1: score '5\.5' is outside 0-5"),
    ("SICK relatedness below 0", one_file(sick.read_sick), SICK_HEADER + "1\tA\tB\t-1\tNEUTRAL\n", r"f\.txt:2: relatedness '-1' is outside"),
    ("NUL byte in an STS input", lambda t, c: sts_subset(t, c, b"3.0\n2.0\n"), b"a\tb\nc\x00\td\n", r"in\.txt:2: a NUL byte"),
    ("Oxford empty definition", one_file(dictionary_readers.read_oxford_tsv), "word\tdefinition\texample\ndog\t \tex\n", r"f\.txt:2: empty definition"),
    ("Ishiwatari empty definition", one_file(dictionary_readers.read_ishiwatari), "dog%oxford.1\t0\t0\t\n", r"f\.txt:1: empty definition"),
    # issue 46: a tab inside a sentence shifted the columns
    ("triplets tab inside a sentence", one_file(nli_readers.read_triplets),
     TRIPLET_HEADER + "A man\tsits.\tA person sits.\tNobody sits.\tsnli\n", r"f\.txt:2: expected 4 tab-separated fields, got 5"),
    ("Oxford tab inside a definition", one_file(dictionary_readers.read_oxford_tsv),
     "word\tdefinition\texample\ndog\ta\tpet\tex\n", r"f\.txt:2: expected 3 tab-separated fields, got 4"),
]


@pytest.mark.parametrize("case, read, content, message", BAD, ids=[c[0] for c in BAD])
def test_bad_input_is_refused_naming_file_and_line(tmp_path, case, read, content, message):
    with pytest.raises(ValueError, match=message):
        read(tmp_path, content)


def mrpc_root(tmp_path, train_text):
    folder = tmp_path / "senteval" / "MRPC"
    folder.mkdir(parents=True)
    (tmp_path / eval_readers.EXCERPT).touch()  # not the pinned files: read as they are
    (folder / "msr_paraphrase_train.txt").write_text(train_text, encoding="utf-8")
    (folder / "msr_paraphrase_test.txt").write_text(MRPC_HEADER + "1\t1\t2\tA.\tB.\n", encoding="utf-8")
    return tmp_path


def test_mrpc_without_its_header_is_refused(tmp_path):
    root = mrpc_root(tmp_path, "1\t1\t2\tA man.\tA person.\n0\t3\t4\tC.\tD.\n")
    with pytest.raises(ValueError, match=r"msr_paraphrase_train\.txt:1: expected a header"):
        eval_readers.load_mrpc(root)


def test_mrpc_with_a_tab_inside_a_sentence_is_refused(tmp_path):
    root = mrpc_root(tmp_path, MRPC_HEADER + "1\t1\t2\tA\tman.\tA person.\n")
    with pytest.raises(ValueError, match=r"msr_paraphrase_train\.txt:2: expected 5 tab-separated fields, got 6"):
        eval_readers.load_mrpc(root)


def test_mrpc_with_its_header_reads_every_row(tmp_path):
    root = mrpc_root(tmp_path, MRPC_HEADER + "1\t1\t2\tA man.\tA person.\n0\t3\t4\tC.\tD.\n")
    assert eval_readers.load_mrpc(root)["train"][2] == [1, 0]


def test_a_good_file_is_read_whole(tmp_path):
    s1, s2, gold = sts_subset(tmp_path, b"a\tb\nc\td\ne\tf\n", b"3.0\n\n1.5\n")
    assert (s1, s2, gold) == (["a", "e"], ["b", "f"], [3.0, 1.5])  # the empty gold line is SentEval's rule
    rows = one_file(nli_readers.read_triplets)(tmp_path, TRIPLET_HEADER + "p\te\tc\tx\n")
    assert rows == [dict(premise="p", entailment="e", contradiction="c", source="x")]


def test_error_message_names_the_path(tmp_path):
    with pytest.raises(ValueError) as info:
        one_file(nli_readers.read_triplets)(tmp_path, "a\tb\tc\n")
    assert re.search(re.escape(str(tmp_path / "f.txt")) + ":1:", str(info.value))


def senteval_file(tmp_path, rel, content):
    path = tmp_path / "senteval" / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    (tmp_path / eval_readers.EXCERPT).touch()  # not the pinned files: read as they are
    path.write_bytes(content)
    return tmp_path


def test_a_utf8_byte_order_mark_is_not_part_of_the_first_sentence(tmp_path):
    s1, _, _ = sts_subset(tmp_path, b"\xef\xbb\xbfa\tb\n", b"3.0\n")
    assert s1 == ["a"]


def test_sst2_with_an_empty_sentence_is_refused(tmp_path):
    root = senteval_file(tmp_path, "SST/binary/sentiment-train", b"good film\t1\n\t0\n")
    with pytest.raises(ValueError, match=r"sentiment-train:2: empty sentence"):
        eval_readers.load_sst2(root)


def test_a_binary_task_file_of_blank_lines_is_refused(tmp_path):
    senteval_file(tmp_path, "MR/rt-polarity.pos", b"a fine film\n")
    root = senteval_file(tmp_path, "MR/rt-polarity.neg", b"\t\n \n")
    with pytest.raises(ValueError, match=r"rt-polarity\.neg: every line is blank"):
        eval_readers.load_binary_task("MR", root)


def test_a_utf8_file_where_senteval_reads_latin1_is_refused_not_garbled(tmp_path):
    senteval_file(tmp_path, "MR/rt-polarity.pos", "a fine film\nun caf\u00e9 charmant\n".encode("utf-8"))
    root = senteval_file(tmp_path, "MR/rt-polarity.neg", b"a dull film\n")
    with pytest.raises(ValueError, match=r"rt-polarity\.pos:2: UTF-8 text in a file read as latin-1"):
        eval_readers.load_binary_task("MR", root)
    senteval_file(tmp_path, "MR/rt-polarity.pos", "a fine film\nun caf\u00e9 charmant\n".encode("latin-1"))
    sentences, _ = eval_readers.load_binary_task("MR", root)   # the latin-1 original reads as it is
    assert sentences[1] == "un caf\u00e9 charmant"


def test_a_latin1_file_with_one_utf8_line_is_refused_at_that_line(tmp_path):
    """Issue 46: the file as a whole is not UTF-8 (its other lines are latin-1), so a per-file
    test let the UTF-8 line through as mojibake; each line is judged now."""
    text = "un caf\u00e9 charmant\n".encode("latin-1") + "a na\u00efve plot\n".encode("utf-8")
    senteval_file(tmp_path, "MR/rt-polarity.pos", text)
    root = senteval_file(tmp_path, "MR/rt-polarity.neg", b"a dull film\n")
    with pytest.raises(ValueError, match=r"rt-polarity\.pos:2: UTF-8 text in a file read as latin-1"):
        eval_readers.load_binary_task("MR", root)


@pytest.mark.parametrize("raw, expected", [
    (b"\xef\xbb\xbf\xef\xbb\xbfa sentence\n", "a sentence\n"),        # a doubled mark: dropped
    (b"\xef\xbb\xbfa sentence\n", "a sentence\n"),
])
def test_byte_order_marks_at_the_start_are_dropped(tmp_path, raw, expected):
    (tmp_path / "f.txt").write_bytes(raw)
    assert readers.read_text(tmp_path / "f.txt") == expected
    assert readers.read_text(tmp_path / "f.txt", encoding="utf-8-sig") == expected


def test_a_byte_order_mark_inside_a_file_is_refused_naming_its_line(tmp_path):
    """Issue 46: two files joined keep the second one's mark inside a sentence."""
    (tmp_path / "f.txt").write_bytes(b"\xef\xbb\xbfline one\n\xef\xbb\xbfline two\n")
    with pytest.raises(ValueError, match=r"f\.txt:2: a byte-order mark"):
        readers.read_text(tmp_path / "f.txt")


@pytest.mark.parametrize("rel, load", [
    ("sts/raw/STSBenchmark/sts-test.csv", lambda root: eval_readers.load_sts("STSB", root)),
    ("sts/raw/STS12/STS.gs.MSRpar.txt", lambda root: eval_readers.load_sts("STS12", root)),
    ("senteval/TREC/TREC_10.label", eval_readers.load_trec),
    ("senteval/MR/rt-polarity.neg", lambda root: eval_readers.load_binary_task("MR", root)),
])
def test_a_file_cut_at_a_line_boundary_is_refused_by_its_reader(tmp_path, rel, load):
    """Issue 85, case 7: a cut at a line boundary still parses; its bytes differ from the pin."""
    from tiny_root import SHARED
    import shutil
    shutil.copytree(SHARED / rel.split("/")[0], tmp_path / rel.split("/")[0])
    assert load(tmp_path)  # the whole files are read
    path = tmp_path / rel
    lines = path.read_bytes().splitlines(keepends=True)
    path.write_bytes(b"".join(lines[:-1]))  # the last line gone, each kept line whole
    if "STS12" in rel:  # the input file loses its line too, so the line counts agree
        path = path.parent / path.name.replace(".gs.", ".input.")
        path.write_bytes(b"".join(path.read_bytes().splitlines(keepends=True)[:-1]))
    with pytest.raises(ValueError, match=re.escape(str(path)) + ": its bytes differ from the pinned SHA-256"):
        load(tmp_path)
