"""Small real PDFs for tests: text pages in Helvetica, a correct cross-reference table, and
the damaged and encrypted variants the document reader must refuse clearly."""

from __future__ import annotations

import io


def _escape(text: str) -> str:
    return text.replace("\\", "\\\\").replace("(", "\\(").replace(")", "\\)")


def _page_stream(lines: list[str]) -> bytes:
    ops = ["BT", "/F1 12 Tf", "14 TL", "72 720 Td"]
    for line in lines:
        ops.append(f"({_escape(line)}) Tj T*")
    ops.append("ET")
    return "\n".join(ops).encode("latin-1")


def text_pdf(pages: list[list[str]], title: str = "", created: str = "") -> bytes:
    """A PDF whose pages hold these lines of text (an empty page: no text layer)."""
    count = len(pages)
    objects: list[bytes] = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        ("<< /Type /Pages /Kids [" + " ".join(f"{4 + 2 * i} 0 R" for i in range(count))
         + f"] /Count {count} >>").encode(),
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>",
    ]  # fmt: skip
    for index, lines in enumerate(pages):
        stream = _page_stream(lines) if lines else b""
        objects.append(
            f"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /Font << "
            f"/F1 3 0 R >> >> /Contents {5 + 2 * index} 0 R >>".encode()
        )
        objects.append(b"<< /Length %d >>\nstream\n" % len(stream) + stream + b"\nendstream")
    info = ""
    if title or created:
        objects.append(f"<< /Title ({_escape(title)}) /CreationDate ({created}) >>".encode())
        info = f" /Info {len(objects)} 0 R"
    out = io.BytesIO()
    out.write(b"%PDF-1.4\n%\xe2\xe3\xcf\xd3\n")
    offsets = []
    for number, body in enumerate(objects, start=1):
        offsets.append(out.tell())
        out.write(f"{number} 0 obj\n".encode() + body + b"\nendobj\n")
    xref = out.tell()
    out.write(f"xref\n0 {len(objects) + 1}\n0000000000 65535 f \n".encode())
    for offset in offsets:
        out.write(f"{offset:010d} 00000 n \n".encode())
    trailer = (
        f"trailer\n<< /Size {len(objects) + 1} /Root 1 0 R{info} >>\nstartxref\n{xref}\n%%EOF\n"
    )
    out.write(trailer.encode())
    return out.getvalue()


def encrypted_pdf(password: str = "s3cret") -> bytes:
    """A one-page PDF that needs a password to be opened."""
    import pypdf

    reader = pypdf.PdfReader(io.BytesIO(text_pdf([["Private notes"]])))
    writer = pypdf.PdfWriter()
    writer.append_pages_from_reader(reader)
    writer.encrypt(user_password=password, owner_password=password, algorithm="RC4-128")
    out = io.BytesIO()
    writer.write(out)
    return out.getvalue()


def broken_xref_pdf() -> bytes:
    """A PDF header and then junk where the objects and the cross-reference table should be."""
    return b"%PDF-1.7\n" + b"\x00garbage " * 200 + b"\nstartxref\n999999\n%%EOF\n"
