import pytest

from stellar.untrusted import csv_cell, csv_rows, for_terminal


@pytest.mark.parametrize(
    "hostile",
    [
        "\x1b[2J",  # CSI: clear screen
        "\x1b[1;31m",  # CSI: colour
        "\x1b[?1049h",  # CSI with a private parameter
        "\x1b]0;pwned\x07",  # OSC window title, ended by BEL
        "\x1b]8;;http://x\x1b\\",  # OSC hyperlink, ended by ST
        "\x1bP1$r\x1b\\",  # DCS string
        "\x1bM",  # two-byte ESC sequence (reverse index)
        "\x1b(B",  # ESC with an intermediate byte
        "\x9b2J",  # 8-bit CSI
        "\x9d0;pwned\x9c",  # 8-bit OSC, ended by 8-bit ST
        "\x9d0;pwned\x07",  # 8-bit OSC, ended by BEL
        "\x00\x07\x08\x0b\x0c\r\x7f",  # C0 controls and DEL
        "\x85\x9f",  # other C1 controls
        "\u202a\u202b\u202c\u202d\u202e",  # bidi embeddings and overrides
        "\u2066\u2067\u2068\u2069",  # bidi isolates
    ],
)
def test_every_escape_family_is_stripped(hostile):
    assert for_terminal(f"before{hostile}after") == "beforeafter"


def test_an_unterminated_sequence_leaves_only_harmless_text():
    assert for_terminal("a\x1b") == "a"
    assert for_terminal("a\x1b é") == "a é"
    assert for_terminal("a\x1b[31") == "a31"
    assert for_terminal("a\x1b]0;title") == "a0;title"


def test_ordinary_text_is_kept():
    text = "Café in Zürich?\n\tnaïve 東京 서울 مرحبا 😀 👩‍👩‍👧 -> [bold]x[/]"
    assert for_terminal(text) == text


def test_lone_surrogates_become_replacement_characters_and_print():
    shown = for_terminal("a\ud800b\udfffc")
    assert shown == "a\ufffdb\ufffdc"
    shown.encode("utf-8")  # does not raise


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ('=HYPERLINK("http://x")', '\'=HYPERLINK("http://x")'),
        ("+cmd|' /C calc'!A0", "'+cmd|' /C calc'!A0"),
        ("-2+3", "'-2+3"),
        ("@SUM(1)", "'@SUM(1)"),
        ("\t=1", "'\t=1"),
        ("\r=1", "'\r=1"),
        ("-", "'-"),
        ("=", "'="),
        ("a=1", "a=1"),
        (" =1", " =1"),
        ("", ""),
        (-0.5, -0.5),
        (-3, -3),
        (True, True),
        (None, None),
    ],
)
def test_csv_cells_that_start_a_formula_get_a_quote(value, expected):
    assert csv_cell(value) == expected
    assert type(csv_cell(value)) is type(expected)


def test_csv_rows_quote_every_cell():
    rows = [{"answer": "=1+1", "score": -0.5, "input": "fine"}]
    assert list(csv_rows(rows)) == [{"answer": "'=1+1", "score": -0.5, "input": "fine"}]
