"""Regenerates the small fixtures of tests/inputs.rs (python-docx 1.2, pikepdf 10).

    pip install python-docx pikepdf && python make_fixtures.py

All content is our own. Outputs: sample.docx, encrypted_user_pw.pdf (user password
`secret`, AES-256), encrypted_rc4_empty_user.pdf (RC4-128, empty user password, owner
password `owner`).
"""
from pathlib import Path

import docx
import pikepdf
from docx.enum.text import WD_BREAK

HERE = Path(__file__).parent


def make_docx() -> None:
    d = docx.Document()
    d.add_heading("Service Agreement", level=0)  # Title style
    d.add_paragraph("This agreement is made between Acme Ltd and Beta GmbH.")
    d.add_heading("1. Definitions", level=1)
    d.add_paragraph("Services means the consulting services described in Annex A.")
    d.add_heading("1.1 Fees", level=2)
    table = d.add_table(rows=3, cols=3)
    for r, row in enumerate([("Item", "Quantity", "Price"), ("Audit", "2", "1,200.00"), ("Training", "1", "800.00")]):
        for c, text in enumerate(row):
            table.cell(r, c).text = text
    p = d.add_paragraph("Fees are due within 30 days.")
    p.add_run().add_break(WD_BREAK.PAGE)
    d.add_heading("2. Term", level=1)
    line = d.add_paragraph("The term is two years")
    line.add_run().add_break()  # manual line break inside the paragraph
    line.add_run("and renews once.")
    d.save(HERE / "sample.docx")


def base_pdf() -> pikepdf.Pdf:
    pdf = pikepdf.new()
    font = pdf.make_indirect(
        pikepdf.Dictionary(Type=pikepdf.Name.Font, Subtype=pikepdf.Name.Type1, BaseFont=pikepdf.Name.Helvetica)
    )
    content = b"BT /F1 12 Tf 72 720 Td (Confidential memo) Tj ET BT /F1 10 Tf 72 700 Td (The launch code is 4711.) Tj ET"
    page = pikepdf.Dictionary(
        Type=pikepdf.Name.Page,
        MediaBox=[0, 0, 595, 842],
        Resources=pikepdf.Dictionary(Font=pikepdf.Dictionary(F1=font)),
        Contents=pdf.make_stream(content),
    )
    pdf.pages.append(pikepdf.Page(page))
    return pdf


def make_pdfs() -> None:
    base_pdf().save(
        HERE / "encrypted_user_pw.pdf",
        encryption=pikepdf.Encryption(user="secret", owner="owner-secret", R=6),
        static_id=True,
    )
    base_pdf().save(
        HERE / "encrypted_rc4_empty_user.pdf",
        encryption=pikepdf.Encryption(user="", owner="owner", R=3, aes=False, metadata=False),
        static_id=True,
    )


if __name__ == "__main__":
    make_docx()
    make_pdfs()
