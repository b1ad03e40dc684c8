import codecs

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
