"""C++ source as tokens, for emu/tools/cuda_rewrite.py: comments and
whitespace skipped; string and character literals, raw strings, digit
separators and line continuations respected; a preprocessor line yields a
`directive` token for its `#` and is tokenized like the rest.  And the bracket
matching the rewrite needs."""

from __future__ import annotations

import re
from dataclasses import dataclass

PUNCT3 = ("<<<", ">>=", "<<=", "...", "->*")
PUNCT2 = ("::", "->", "++", "--", "<<", ">>", "<=", ">=", "==", "!=", "&&", "||", "+=", "-=", "*=",
          "/=", "%=", "&=", "|=", "^=", "##", ".*")
OPEN = {"(": ")", "[": "]", "{": "}"}
CLOSE = {")": "(", "]": "[", "}": "{"}


class RewriteError(Exception):
    def __init__(self, line: int, message: str):
        super().__init__(message)
        self.line = line


@dataclass
class Token:
    kind: str  # ident, number, string, char, punct, directive
    text: str
    start: int
    end: int
    line: int


def tokenize(text: str) -> list[Token]:
    """Significant tokens; comments and whitespace are skipped.  A preprocessor
    line yields a `directive` token for its `#` and is otherwise tokenized too."""
    tokens: list[Token] = []
    i, n, line = 0, len(text), 1
    at_line_start = True
    while i < n:
        c = text[i]
        if c == "\n":
            line += 1
            i += 1
            at_line_start = True
            continue
        if c in " \t\r\f\v":
            i += 1
            continue
        if c == "\\" and text.startswith("\n", i + 1):  # line continuation
            line += 1
            i += 2
            continue
        if text.startswith("//", i):
            j = i
            while j < n and text[j] != "\n":
                j += 2 if text[j] == "\\" and j + 1 < n and text[j + 1] == "\n" else 1
                line += text[j - 1] == "\n"
            i = j
            continue
        if text.startswith("/*", i):
            j = text.find("*/", i + 2)
            if j < 0:
                raise RewriteError(line, "unterminated /* comment")
            line += text.count("\n", i, j)
            i = j + 2
            continue
        start, start_line = i, line
        if c == "#" and at_line_start:
            tokens.append(Token("directive", "#", i, i + 1, line))
            i += 1
            at_line_start = False
            continue
        at_line_start = False
        m = re.compile(r'(?:u8|u|U|L)?R"([^()\\ ]{0,16})\(').match(text, i)
        if m:  # raw string literal
            close = ")" + m.group(1) + '"'
            j = text.find(close, m.end())
            if j < 0:
                raise RewriteError(line, "unterminated raw string literal")
            line += text.count("\n", i, j)
            i = j + len(close)
            tokens.append(Token("string", text[start:i], start, i, start_line))
            continue
        m = re.compile(r"(?:u8|u|U|L)?([\"'])").match(text, i)
        if m:
            quote = m.group(1)
            j = m.end()
            while j < n and text[j] != quote:
                if text[j] == "\n":
                    raise RewriteError(line, "unterminated literal")
                j += 2 if text[j] == "\\" else 1
            i = j + 1
            tokens.append(Token("string" if quote == '"' else "char", text[start:i], start, i, line))
            continue
        if c.isalpha() or c == "_":
            j = i + 1
            while j < n and (text[j].isalnum() or text[j] == "_"):
                j += 1
            tokens.append(Token("ident", text[i:j], i, j, line))
            i = j
            continue
        if c.isdigit() or (c == "." and i + 1 < n and text[i + 1].isdigit()):
            # pp-number: digits, letters, '.', exponent signs, digit separators.
            j = i + 1
            while j < n:
                if text[j].isalnum() or text[j] in "._":
                    j += 1
                elif text[j] in "+-" and text[j - 1] in "eEpP":
                    j += 1
                elif text[j] == "'" and j + 1 < n and text[j + 1].isalnum():
                    j += 1
                else:
                    break
            tokens.append(Token("number", text[i:j], i, j, line))
            i = j
            continue
        for group in (PUNCT3, PUNCT2):
            hit = next((p for p in group if text.startswith(p, i)), None)
            if hit:
                tokens.append(Token("punct", hit, i, i + len(hit), line))
                i += len(hit)
                break
        else:
            tokens.append(Token("punct", c, i, i + 1, line))
            i += 1
    return tokens


def match_bracket(tokens: list[Token], i: int, step: int) -> int | None:
    """Index of the bracket matching tokens[i]: forward (step 1) from an
    opening one, backward (step -1) from a closing one; None if unbalanced."""
    opening, closing = (OPEN, CLOSE) if step == 1 else (CLOSE, OPEN)
    depth = 0
    for j in range(i, len(tokens) if step == 1 else -1, step):
        t = tokens[j].text
        if t in opening:
            depth += 1
        elif t in closing:
            depth -= 1
            if depth == 0:
                return j
    return None


def match_forward(tokens: list[Token], i: int) -> int:
    j = match_bracket(tokens, i, 1)
    if j is None:
        raise RewriteError(tokens[i].line, f"no closing bracket for '{tokens[i].text}'")
    return j


def match_angle_back(tokens: list[Token], i: int) -> int:
    """tokens[i] closes a template argument list ('>' or '>>'); index of its '<'."""
    depth, j = 0, i
    while j >= 0:
        t = tokens[j].text
        if t in (">", ">>"):
            depth += len(t)
        elif t == "<":
            depth -= 1
            if depth == 0:
                return j
        elif t in CLOSE:
            j = match_bracket(tokens, j, -1)  # skip `(...)` inside the arguments
            if j is None:
                break
        elif t in (";", "{", "}"):
            break
        j -= 1
    raise RewriteError(tokens[i].line, "cannot find the template argument list of the kernel")
