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
    text, _ = decode_text(original.encode(encoding))
    assert text == original


def test_gb18030_is_reported_as_gb18030() -> None:
    assert decode_text(CHINESE.encode("gb18030"))[1] == "gb18030"


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
    text, encoding = decode_text(data)
    assert encoding == expected_encoding
    assert text.startswith("Retention rules")


def test_latin1_text_is_decoded() -> None:
    original = "Le délai de conservation des factures est de sept années complètes. " * 4
    text, _ = decode_text(original.encode("cp1252"))
    assert text == original


@pytest.mark.parametrize(
    "data",
    [bytes(range(256)) * 8, b"\x89PNG\r\n\x1a\n" + b"\x00\x01\x02" * 300],
)
def test_binary_data_is_not_text(data: bytes) -> None:
    with pytest.raises(NotTextError):
        decode_text(data)
