import codecs
from pathlib import Path

import pytest

from app.documents.textcodec import NotTextError, decode_text

CHINESE = (
    "第五节 数据保留。员工档案在员工离职后必须保存十年。财务凭证保存十五年，之后由档案室统一销毁。"
    "所有电子邮件在二十四个月后删除，除非适用法律保留。"
) * 3


TRADITIONAL = "員工檔案在員工離職後必須保存十年。財務憑證保存十五年，之後由檔案室統一銷毀。" * 4
JAPANESE = "従業員の記録は退職後十年間保存しなければならない。請求書は七年間保管する。" * 4


@pytest.mark.parametrize(
    ("original", "encoding"),
    [(CHINESE, "gb18030"), (TRADITIONAL, "big5"), (JAPANESE, "shift_jis")],
)
def test_legacy_cjk_encodings_are_detected(original: str, encoding: str) -> None:
    assert decode_text(original.encode(encoding)).text == original


def test_gb18030_is_reported_as_gb18030() -> None:
    assert decode_text(CHINESE.encode("gb18030")).encoding == "gb18030"


@pytest.mark.parametrize(
    ("data", "expected_encoding"),
    [
        (codecs.BOM_UTF16_LE + "Retention rules 保留".encode("utf-16-le"), "utf-16-le"),
        (codecs.BOM_UTF16_BE + "Retention rules 保留".encode("utf-16-be"), "utf-16-be"),
        (codecs.BOM_UTF8 + "Retention rules 保留".encode(), "utf-8"),
        ("Retention rules without a BOM".encode("utf-16-le"), "utf-16-le"),
        ("Retention rules 保留".encode(), "utf-8"),
    ],
)
def test_unicode_encodings(data: bytes, expected_encoding: str) -> None:
    text, encoding, _ = decode_text(data)
    assert encoding == expected_encoding
    assert text.startswith("Retention rules")


def test_latin1_text_is_decoded() -> None:
    original = "Le délai de conservation des factures est de sept années complètes. " * 4
    assert decode_text(original.encode("cp1252")).text == original


@pytest.mark.parametrize(
    "data",
    [bytes(range(256)) * 8, b"\x89PNG\r\n\x1a\n" + b"\x00\x01\x02" * 300],
)
def test_binary_data_is_not_text(data: bytes) -> None:
    with pytest.raises(NotTextError):
        decode_text(data)


WESTERN = [
    ("danish", "Ærøskøbing ligger på Ærø, og færgen sejler hver time."),
    ("french", "Une idée naïve du garçon français, à l'évidence."),
    ("spanish", "El señor pagó en el año pasado a la compañía."),
    ("german", "Die Größe der Übung überrascht die Schüler."),
    ("portuguese", "O coração não mente, e a canção é bonita."),
    ("icelandic", "Þórður og Guðrún fóru á fætur."),
    ("italian", "Perché è così? Più tardi lo saprò."),
    ("swedish", "Smörgåsbord på Åland är gött."),
    ("dutch", "Het café is één keer per week geopend."),
]
CENTRAL = [
    ("cp1250", "Příliš žluťoučký kůň úpěl ďábelské ódy."),
    ("cp1250", "Zażółć gęślą jaźń, powiedział wczoraj."),
    ("cp1250", "Árvíztűrő tükörfúrógép a műhelyben."),
    ("cp1251", "Съешь же ещё этих мягких французских булок, да выпей чаю."),
    ("cp1257", "Ąžuolas ir ėglė šviečia saulėje."),
    ("cp1254", "Güzel bir ağaç, şimdi ılık bir rüzgâr."),
]


@pytest.mark.parametrize("encoding", ["latin-1", "cp1252"])
@pytest.mark.parametrize(("language", "sentence"), WESTERN)
def test_western_text_round_trips(language: str, sentence: str, encoding: str) -> None:
    assert decode_text(sentence.encode(encoding)).text == sentence
    paragraph = " ".join(sentence for _, sentence in WESTERN)
    assert decode_text(paragraph.encode(encoding)).text == paragraph


@pytest.mark.parametrize(("encoding", "sentence"), CENTRAL)
def test_other_single_byte_text_still_decodes_right(encoding: str, sentence: str) -> None:
    decoded = decode_text(sentence.encode(encoding))
    assert (decoded.text, decoded.assumed) == (sentence, None)


def test_an_uncertain_choice_names_the_encoding_it_assumed() -> None:
    """ "Perché è così" is also "Perchč č cosě" in Windows-1250: both read as some language."""
    decoded = decode_text("Perché è così.".encode("latin-1"))
    assert decoded.text == "Perché è così."
    assert decoded.assumed == "Windows-1252 (Western European)"


WESTERN_WORDS = [
    "Ærøskøbing",
    "naïve",
    "señor",
    "café",
    "façade",
    "Müller",
    "São Paulo",
    "Þingvellir",
    "Smörgåsbord",
    "Größe",
]


@pytest.mark.parametrize("encoding", ["latin-1", "cp1252"])
@pytest.mark.parametrize("word", WESTERN_WORDS)
def test_a_single_western_word_round_trips(word: str, encoding: str) -> None:
    """Five bytes fit dozens of code pages; none may turn "café" into UTF-16 or Big5."""
    assert decode_text(word.encode(encoding)).text == word


@pytest.mark.parametrize(
    "sentence",
    [
        "O nº 5 custa 3 µg, disse o senhor João.",
        "La 1ª edición del año.",
        "La col·lecció és a la biblioteca.",
        "“Naïve” — said the señor, costing 5€.",
    ],
)
def test_western_letters_outside_any_script_do_not_derail_it(sentence: str) -> None:
    """º, ª and µ are letters of no script; · and ’ sit between letters in Catalan and French."""
    assert decode_text(sentence.encode("cp1252")).text == sentence


def test_a_byte_windows_1252_leaves_undefined_does_not_refuse_latin_1_text() -> None:
    data = "Ærøskøbing ligger på Ærø.".encode("latin-1") + b"\x81\n"
    assert decode_text(data).text.startswith("Ærøskøbing ligger på Ærø.")


def test_an_undefined_byte_after_the_judged_sample_is_replaced_not_raised() -> None:
    data = b"x" * (2 << 20) + "Größe über alles.".encode("latin-1") + b"\x81"
    text = decode_text(data).text
    assert text.endswith("Größe über alles.\ufffd")


@pytest.mark.parametrize(
    "sentence",
    [
        "Zażółć gęślą jaźń, powiedział wczoraj.",
        "Příliš žluťoučký kůň úpěl ďábelské ódy.",
        "Łódź",
        "Příliš",
    ],
)
def test_central_european_text_in_iso_8859_2_and_windows_1250(sentence: str) -> None:
    for encoding in ("iso-8859-2", "cp1250"):
        assert decode_text(sentence.encode(encoding)).text == sentence, encoding


@pytest.mark.parametrize(
    ("encoding", "sentence"),
    [
        ("gb18030", "员工档案在员工离职后必须保存十年。"),
        ("euc_jp", "従業員の記録は退職後十年間保存しなければならない。"),
        ("euc_kr", "다람쥐 헌 쳇바퀴에 타고파."),
        ("cp1251", "Привет, как дела?"),
        ("koi8-r", "Съешь же ещё этих мягких французских булок."),
        ("cp1253", "Ξεσκεπάζω την ψυχοφθόρα βδελυγμία."),
    ],
)
def test_one_sentence_in_other_scripts(encoding: str, sentence: str) -> None:
    assert decode_text(sentence.encode(encoding)).text == sentence


def test_a_tie_between_scripts_is_reported_not_hidden() -> None:
    """Four Hanzi are also four Kanji in EUC-JP: whichever is chosen, the choice is a guess."""
    decoded = decode_text("数据保留".encode("gb18030"))
    assert decoded.uncertain
    assert decoded.assumed in {"GB18030 (Chinese)", "EUC-JP (Japanese)"}


def test_a_long_western_text_is_not_reported_as_a_guess() -> None:
    paragraph = " ".join(sentence for _, sentence in WESTERN) * 50
    decoded = decode_text(paragraph.encode("latin-1"))
    assert (decoded.text, decoded.assumed, decoded.uncertain) == (paragraph, None, False)


def test_the_document_note_names_the_encoding_assumed(tmp_path: Path) -> None:
    from app.documents.parse import open_document

    path = tmp_path / "note.txt"
    path.write_bytes("Perché è così.\n".encode("latin-1"))
    document = open_document(path)
    try:
        assert document.note == "encoding assumed: Windows-1252 (Western European)"
        assert document.encoding == "cp1252"
    finally:
        document.close()


WESTERN_PARAGRAPHS = {
    "danish": "Ærøskøbing er en købstad på Ærø. Byen er kendt for sine gamle huse og "
    "brostensbelagte gader. Om sommeren kommer mange turister med færgen fra Svendborg.",
    "french": "Le garçon a mangé une crème brûlée au café. Ensuite, il s'est promené près du lac "
    "où l'on voit des forêts épaisses. C'était une journée très agréable, malgré la pluie.",
    "spanish": "El señor García vive en una pequeña ciudad de España. Cada mañana camina hasta "
    "la panadería y compra pan recién hecho. ¿Quién no querría una vida así?",
    "german": "Die Größe der Übung überraschte die Schüler. Später gingen sie über die Brücke "
    "zum Bäcker, wo es frische Brötchen gab. Außerdem war das Wetter schön.",
    "portuguese": "O coração do João bateu mais forte quando ouviu a canção. Ele não sabia que a "
    "avó também gostava de música. À noite, jantaram juntos na varanda.",
    "icelandic": "Þórður og Guðrún fóru á fætur snemma. Þau ætluðu að ganga upp á fjallið og sjá "
    "útsýnið yfir fjörðinn. Veðrið var gott og sólin skein.",
    "italian": "Perché è così difficile? Più tardi lo saprò, disse Niccolò. Il caffè è già "
    "pronto e la torta è là, sul tavolo. Però non c'è più zucchero.",
    "swedish": "Smörgåsbord är en svensk måltid. På Åland äter man ofta fisk och bröd. Här är "
    "det vackert på sommaren, när sjöarna är varma.",
    "finnish": "Hyvää päivää! Järvi on jäässä ja metsä on hiljainen. Tänään menemme saunaan, ja "
    "sen jälkeen syömme kalaa.",
    "dutch": "Het café is één keer per week geopend. Daarnaast is er een cursus over de "
    "geschiedenis van België. Wij weten niet waarom de coöperatie het zo geregeld heeft.",
    "norwegian": "Blåbærsyltetøy på brødskiva er godt. Vi gikk på tur i skogen og så en elg. "
    "Været var kaldt, men vi frøs ikke.",
}
OTHER_PARAGRAPHS = [
    (
        "czech",
        ("cp1250", "iso-8859-2"),
        "Příliš žluťoučký kůň úpěl ďábelské ódy. Včera jsme "
        "byli v Brně a viděli jsme hrad Špilberk. Večer jsme šli do restaurace na svíčkovou.",
    ),
    (
        "polish",
        ("cp1250", "iso-8859-2"),
        "Zażółć gęślą jaźń. Wczoraj byliśmy w Łodzi i "
        "widzieliśmy piękny dworzec. Wieczorem poszliśmy do kawiarni na pączki.",
    ),
    (
        "hungarian",
        ("cp1250", "iso-8859-2"),
        "Árvíztűrő tükörfúrógép. Tegnap Budapesten "
        "voltunk, és megnéztük a Lánchidat. Este egy kis étteremben vacsoráztunk.",
    ),
    (
        "russian",
        ("cp1251", "koi8-r"),
        "Съешь же ещё этих мягких французских булок, да выпей "
        "чаю. Вчера мы гуляли по Москве и видели Красную площадь. Вечером пошёл дождь.",
    ),
    (
        "greek",
        ("cp1253",),
        "Ξεσκεπάζω την ψυχοφθόρα βδελυγμία. Χθες πήγαμε στην Αθήνα και "
        "είδαμε την Ακρόπολη. Το βράδυ φάγαμε σε μια μικρή ταβέρνα.",
    ),
    (
        "chinese",
        ("gb18030",),
        "第五节 数据保留。员工档案在员工离职后必须保存十年。"
        "财务凭证保存十五年，之后由档案室统一销毁。",
    ),
    (
        "japanese",
        ("shift_jis", "euc_jp"),
        "従業員の記録は退職後十年間保存しなければならない。"
        "請求書は七年間保管する。会議の議事録は総務部が管理する。",
    ),
    (
        "korean",
        ("euc_kr",),
        "다람쥐 헌 쳇바퀴에 타고파. 어제는 서울에 가서 경복궁을 "
        "구경했습니다. 저녁에는 작은 식당에서 비빔밥을 먹었습니다.",
    ),
]


@pytest.mark.parametrize("encoding", ["latin-1", "cp1252"])
@pytest.mark.parametrize("language", list(WESTERN_PARAGRAPHS))
def test_a_western_paragraph_round_trips_without_a_guess(language: str, encoding: str) -> None:
    paragraph = WESTERN_PARAGRAPHS[language]
    decoded = decode_text(paragraph.encode(encoding))
    assert (decoded.text, decoded.assumed) == (paragraph, None)


@pytest.mark.parametrize(("language", "encodings", "paragraph"), OTHER_PARAGRAPHS)
def test_other_paragraphs_decode_right_without_a_guess(
    language: str, encodings: tuple[str, ...], paragraph: str
) -> None:
    for encoding in encodings:
        decoded = decode_text(paragraph.encode(encoding))
        assert (decoded.text, decoded.assumed) == (paragraph, None), encoding


@pytest.mark.parametrize("encoding", ["latin-1", "cp1252"])
@pytest.mark.parametrize(
    "sentence",
    [
        "Alle mennesker er født frie og lige i værdighed og rettigheder.",
        "Vi gikk på tur i skogen, og været var kaldt, men vi frøs ikke.",
        "Søren Kierkegaard skrev om angst.",
        "Tromsø ligger nord for polarsirkelen.",
        "Smørrebrød med rejer og æg.",
    ],
)
def test_danish_and_norwegian_are_not_read_as_windows_1250(sentence: str, encoding: str) -> None:
    """ø, æ and å are ř, ć and ĺ in Windows-1250: letters Czech, Polish and Slovak write rarely."""
    assert decode_text(sentence.encode(encoding)).text == sentence


@pytest.mark.parametrize(
    ("encoding", "sentence"),
    [
        ("cp1250", "Sva ljudska bića rađaju se slobodna i jednaka u dostojanstvu i pravima."),
        ("iso-8859-2", "Prijatli, obrodile so trte vince nam sladko, ki nam oživlja žile."),
    ],
)
def test_a_sentence_is_read_in_the_language_its_letters_are_likeliest_in(
    encoding: str, sentence: str
) -> None:
    """Icelandic would write "biæa raðaju" with five times the accents; Slovak writes ľ rarely."""
    assert decode_text(sentence.encode(encoding)).text == sentence


@pytest.mark.parametrize(
    ("encoding", "sentence"),
    [
        ("gb18030", "Alle mennesker er født frie og lige i værdighed og rettigheder."),
        ("gb18030", "Tutti gli esseri umani nascono liberi ed eguali in dignità e diritti."),
        ("euc_kr", "Alle mennesker er født frie og lige i værdighed og rettigheder."),
    ],
)
def test_latin_text_in_a_multi_byte_encoding(encoding: str, sentence: str) -> None:
    """GB18030 spells ø in four bytes: in Latin-1 a control character between digits."""
    assert decode_text(sentence.encode(encoding)).text == sentence


@pytest.mark.parametrize(
    ("encoding", "sentence"),
    [
        ("shift_jis", "吾輩は猫である。名前はまだ無い。"),
        ("gb18030", "道可道，非常道；名可名，非常名。"),
    ],
)
def test_a_short_cjk_sentence_is_not_read_as_korean(encoding: str, sentence: str) -> None:
    """Read as Korean, the kana are syllables beyond KS X 1001, and the Hanzi a phrase of
    twelve syllables without a space."""
    assert decode_text(sentence.encode(encoding)).text == sentence
