"""Mail as clients save it: Thunderbird's envelope line, obsolete headers, raw 8-bit headers,
charsets read by their supersets, messages Python's parser chokes on, undated messages."""

from __future__ import annotations

from email import policy
from email.parser import BytesParser
from pathlib import Path, PurePath

import pytest

from engine.extractors import ExtractError, Extraction, get_extractor
from engine.extractors.mail_headers import (
    address_pairs,
    decode_words,
    envelope_date,
    received_date,
    superset,
)
from engine.extractors.sniffing import HEAD_BYTES, no_siblings
from engine.index.recognise import candidates

MAIL = Path(__file__).parent / "fixtures" / "email_catalog"
CLIENT_SHAPES = [
    "thunderbird-saved.eml",
    "outlook-express-cp1252.eml",
    "php-mail-utf8.eml",
    "obsolete-headers.eml",
    "foxmail-gb2312.eml",
    "outlook-big5-hkscs.eml",
    "outlook-ks_c_5601-1987.eml",
    "bad-parser-errors.mbox",
    "undated.mbox",
    "undated-received.eml",
]


def extract_fixture(name: str) -> Extraction:
    return get_extractor("email_catalog")((MAIL / name).read_bytes(), MAIL / name)


def extract(data: bytes, name: str = "m.eml") -> Extraction:
    return get_extractor("email_catalog")(data, PurePath(name))


def claims(name: str, head: bytes) -> str | None:
    for source_type, recogniser in candidates(name):
        if recogniser.test(name, head, no_siblings):
            return source_type
    return None


# -- recognised ---------------------------------------------------------------------------------


@pytest.mark.parametrize("name", [n for n in CLIENT_SHAPES if n.endswith(".eml")])
def test_every_client_shaped_eml_is_known_by_its_content(name: str) -> None:
    assert claims(name, (MAIL / name).read_bytes()[:HEAD_BYTES]) == "email_catalog"


def test_an_eml_saved_with_its_envelope_line_is_mail_and_reads_whole() -> None:
    data = (MAIL / "thunderbird-saved.eml").read_bytes()
    assert data.startswith(b"From - Tue Mar 12 09:14:07 2024\r\n")
    assert claims("Schlüsselübergabe.eml", data[:HEAD_BYTES]) == "email_catalog"
    (draft,) = extract_fixture("thunderbird-saved.eml").drafts
    assert draft.title == "Schlüsselübergabe Gartenhaus"
    assert draft.content_date == "2024-03-12T09:14:02"  # its Date:, not the envelope's
    assert "X-Mozilla" not in draft.content and "Regentonne" in draft.content


def test_look_alikes_of_an_envelope_line_are_not_mail() -> None:
    assert claims("notes.eml", b"From here on we walk.\nThe path is long.\n") is None
    assert claims("m.eml", b"From : Ana <a@x.example>\nSubject : hi\n\nbody\n") == "email_catalog"


# -- decoded ------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", CLIENT_SHAPES)
def test_no_replacement_character_or_mojibake_in_any_client_shape(name: str) -> None:
    result = extract_fixture(name)
    text = "\n".join(
        [d.content + d.title + " ".join(d.people) for d in result.drafts]
        + [m.name for m in result.mentions]
        + result.problems
        + result.notes
    )
    assert result.drafts
    assert "\ufffd" not in text
    assert not any(marker in text for marker in ("Ã", "â€", "Â", "=?", "\udc80"))


@pytest.mark.parametrize(
    ("name", "title", "sender", "in_body"),
    [
        (
            "outlook-express-cp1252.eml",
            "Formação — inscrições até sexta",
            "João Conceição",
            "“Formação em Primeiros Socorros” terminam na sexta —",
        ),
        (
            "php-mail-utf8.eml",
            "Confirmação da sua inscrição — Formação de Primeiros Socorros",
            "Associação Recreativa São João",
            "sábado, 23 de março",
        ),
        ("foxmail-gb2312.eml", "周六陶喆演唱会的票已经买好了", "张伟", "李镕："),
        ("outlook-big5-hkscs.eml", "聽日食飯嘅地方", "陳大文", "我哋聽日七點喺銅鑼灣等，啲朋友"),
        ("outlook-ks_c_5601-1987.eml", "똠방각하 독서모임 일정", "김서연", "똠방각하 독서모임은"),
    ],
)
def test_raw_and_labelled_charsets_read_as_mail_readers_do(
    name: str, title: str, sender: str, in_body: str
) -> None:
    result = extract_fixture(name)
    (draft,) = result.drafts
    assert (draft.title, draft.people[0]) == (title, sender)
    assert in_body in draft.content
    assert result.mentions[0].name == sender and result.mentions[0].role == "author"


def test_the_fixtures_hold_the_bytes_that_fooled_the_reader() -> None:
    """Raw 8-bit headers in cp1252 and UTF-8; GB2312, Big5 and KS C 5601 labels on text their
    own charsets cannot hold: the shapes that became U+FFFD or mojibake."""
    outlook = (MAIL / "outlook-express-cp1252.eml").read_bytes()
    assert "Subject: Formação — inscrições até sexta".encode("cp1252") in outlook
    php = (MAIL / "php-mail-utf8.eml").read_bytes()
    assert "Subject: Confirmação".encode() in php and b"charset=iso-8859-1" in php
    for text, label, written in (
        ("陶喆", "gb2312", "gbk"),
        ("李镕", "gb2312", "gbk"),
        ("嘅", "big5", "big5hkscs"),
        ("똠", "euc_kr", "cp949"),
    ):
        with pytest.raises(UnicodeDecodeError):
            text.encode(written).decode(label)


def test_obsolete_header_spacing_and_odd_folds() -> None:
    (draft,) = extract_fixture("obsolete-headers.eml").drafts
    assert draft.title == "Reading seminar moved to Thursday, room 204"
    assert draft.metadata["from"] == "Prof. Hannah Kraus <kraus@uni-example.edu>"
    assert draft.metadata["to"] == "seminar-list@uni-example.edu, martin.vogel@uni-example.edu"
    assert draft.content_date == "1996-03-12T15:15:00"  # `12 Mar 96 10:15:00 EST`
    assert draft.content.endswith("H. Kraus")  # the body is not taken for headers


def test_charset_labels_read_by_their_supersets() -> None:
    assert [superset(label) for label in ("GB2312", '"big5"', "ks_c_5601-1987", "ISO-8859-1")] == [
        "gb18030",
        "big5hkscs",
        "cp949",
        "cp1252",
    ]
    assert (superset("us-ascii"), superset("utf-8"), superset("x-no-such")) == (
        "cp1252",
        "utf-8",
        None,
    )


def test_encoded_words_joined_before_decoding_and_names_split_before_decoding() -> None:
    """A character cut across two encoded-words, and a comma inside an encoded name."""
    cut = "镕".encode("gbk")
    halves = [f"=?gb2312?Q?={cut[0]:02X}?=", f"=?gb2312?Q?={cut[1]:02X}?="]
    assert decode_words(" ".join(halves) + " ok", None) == "镕 ok"
    pairs = address_pairs("=?utf-8?q?Lima=2C_Ana?= <ana@x.example>, bo@x.example", None)
    assert pairs == [("Lima, Ana", "ana@x.example"), ("", "bo@x.example")]


def test_raw_8bit_headers_try_utf8_then_the_declared_charset_then_cp1252() -> None:
    def subject(raw: bytes, charset: str) -> str:
        head = b"From: a@x.example\nSubject: " + raw + b"\nContent-Type: text/plain; charset="
        return extract(head + charset.encode() + b"\n\nbody\n").drafts[0].title

    assert subject("Formação".encode(), "iso-8859-1") == "Formação"
    assert subject("Formação".encode("cp1252"), "iso-8859-1") == "Formação"
    assert subject("Привет".encode("koi8_r"), "koi8-r") == "Привет"
    unknown = "Привет".encode("koi8_r")  # under a label nobody knows: cp1252, never U+FFFD
    assert subject(unknown, "x-unknown") == unknown.decode("cp1252")


def test_a_raw_8bit_attachment_name_is_read_not_replaced() -> None:
    message = (
        b"From: a@x.example\nSubject: minutes\nMIME-Version: 1.0\n"
        b'Content-Type: multipart/mixed; boundary="b"\n\n--b\nContent-Type: text/plain\n\nsee file\n'
        b"--b\nContent-Type: application/pdf\n"
        b'Content-Disposition: attachment; filename="Ata da reuni\xe3o.pdf"\n\n%PDF-1.4\n--b--\n'
    )
    assert extract(message).drafts[0].metadata["attachments"] == ["Ata da reunião.pdf"]


# -- malformed ----------------------------------------------------------------------------------


def test_headers_that_break_pythons_parser_keep_their_messages() -> None:
    """The issue's `'str' object has no attribute 'token_type'` and a truncated parameter:
    `policy.default` raises on both; the reader keeps both messages, and a message whose
    parts nest 1,200 deep is that message's one problem, in words."""
    data = (MAIL / "bad-parser-errors.mbox").read_bytes()
    group = BytesParser(policy=policy.default).parsebytes(
        b"To: Freunde des Gartenvereins e.V.:;\n\n"
    )
    with pytest.raises(AttributeError, match="token_type"):
        str(group["To"])
    with pytest.raises(IndexError):
        BytesParser(policy=policy.default).parsebytes(b"Content-Type: text/plain; charset*\n\nx")
    assert b"To: Freunde des Gartenvereins e.V.:;\n" in data and b"charset*\n" in data

    result = extract_fixture("bad-parser-errors.mbox")
    assert [d.title for d in result.drafts] == [
        "Compost delivery on Friday",
        "Arbeitseinsatz am Samstag",
        "Seed swap list",
        "Re: Compost delivery on Friday",
    ]
    assert result.drafts[1].metadata["to"] == "Freunde des Gartenvereins e.V.:;"
    assert result.problems == [
        "line 37: the message 'Claim your prize' could not be taken apart (its MIME parts "
        "are broken)"
    ]


def test_an_eml_the_parser_cannot_take_apart_is_one_error_in_words() -> None:
    mbox = (MAIL / "bad-parser-errors.mbox").read_bytes()
    start = mbox.index(b"From: Prize Office")
    end = mbox.index(b"From - Wed Mar 13")
    with pytest.raises(ExtractError) as raised:
        extract(mbox[start:end], "prize.eml")
    assert str(raised.value) == (
        "the message 'Claim your prize' could not be taken apart (its MIME parts are broken)"
    )


# -- dated --------------------------------------------------------------------------------------


def test_undated_mail_dated_by_its_from_line() -> None:
    result = extract_fixture("undated.mbox")
    assert [d.content_date for d in result.drafts] == [
        "2024-03-10T03:00:02",  # the From line's, a second after its Received
        "2024-03-10T17:22:40",  # its Date: is German words
    ]
    assert result.notes == [
        "line:16: its Date header 'Sonntag, 10. März 2024 18:22' is not a date; "
        "dated by its From line"
    ]


def test_undated_mail_dated_by_its_topmost_received() -> None:
    (draft,) = extract_fixture("undated-received.eml").drafts
    assert draft.content_date == "2024-03-13T06:45:10"  # not the older hop's 06:44:58


@pytest.mark.parametrize(
    ("line", "when"),
    [
        ("From - Tue Mar 12 09:14:07 2024\r\n", "2024-03-12T09:14:07"),
        ("From MAILER-DAEMON Sat Jan  3 01:05:34 1996", "1996-01-03T01:05:34"),
        ("From a@x.example Mon Mar 11 10:00 2024", "2024-03-11T10:00:00"),
        ("From a@x.example Mon Mar 11 10:00:00 CET 2024", "2024-03-11T10:00:00"),
        ("From a@x.example Mon Mar 11 10:00:00 2024 +0100", "2024-03-11T10:00:00"),
        ("From a@x.example Mon Foo 11 10:00:00 2024", None),
        ("From a@x.example", None),
    ],
)
def test_envelope_dates(line: str, when: str | None) -> None:
    assert envelope_date(line) == when


def test_received_dates() -> None:
    assert received_date("from a by b; Wed, 13 Mar 2024 07:45:10 +0100") == "2024-03-13T06:45:10"
    assert received_date("from a by b\r\n\tid 4; Wed, 13 Mar 2024 07:45:10 +0100 (CET)") == (
        "2024-03-13T06:45:10"
    )
    assert received_date("from a by b with LMTP") is None
