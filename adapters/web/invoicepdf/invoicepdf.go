// Package invoicepdf renders an invoice as a PDF (A4, one or more pages): merchant, number,
// dates, customer, lines with VAT, totals and status. It uses signintech/gopdf, a maintained
// pure-Go writer with TrueType embedding (so every currency sign and accented name prints),
// and the Go fonts (golang.org/x/image/font/gofont, BSD-licensed), embedded in the binary: no
// file is read at run time.
package invoicepdf

import (
	"fmt"
	"strconv"
	"time"

	"github.com/signintech/gopdf"
	"golang.org/x/image/font/gofont/gobold"
	"golang.org/x/image/font/gofont/goregular"

	"github.com/kassa-pay/kassa/core"
	"github.com/kassa-pay/kassa/modules/invoicing"
)

const (
	pageW, pageH = 595.28, 841.89 // A4 in points
	margin       = 50.0
	lineH        = 16.0
)

// Columns of the lines table: left edge of each, the amounts right-aligned to the next edge.
var cols = []float64{margin, 300, 350, 430, 480, pageW - margin}

// Render writes the PDF of the invoice h (a sent invoice; a draft prints "Draft").
func Render(h *invoicing.Hosted) ([]byte, error) {
	inv := h.Invoice
	pdf := &gopdf.GoPdf{}
	pdf.Start(gopdf.Config{PageSize: gopdf.Rect{W: pageW, H: pageH}})
	number := "Draft"
	if n := inv.Number(); n != nil {
		number = *n
	}
	pdf.SetInfo(gopdf.PdfInfo{Title: "Invoice " + number, Author: h.Merchant.Name, Creator: "Kassa"})
	if err := pdf.AddTTFFontData("regular", goregular.TTF); err != nil {
		return nil, err
	}
	if err := pdf.AddTTFFontData("bold", gobold.TTF); err != nil {
		return nil, err
	}
	w := &writer{pdf: pdf}
	w.page()
	c := inv.Currency()
	w.text("bold", 18, margin, h.Merchant.Name)
	w.y += 26
	w.text("bold", 14, margin, "Invoice "+number)
	w.right("bold", 11, pageW-margin, statusText(inv))
	w.y += 28
	w.text("regular", 10, margin, "Billed to")
	w.text("regular", 10, 300, "Issued")
	w.text("regular", 10, 430, "Due")
	w.y += lineH
	w.text("bold", 10, margin, inv.CustomerName())
	w.text("bold", 10, 300, date(inv.IssueDate()))
	w.text("bold", 10, 430, date(inv.DueDate()))
	w.y += lineH
	w.text("regular", 10, margin, inv.CustomerEmail())
	w.y += 2 * lineH
	w.header()
	for _, l := range inv.Lines() {
		if w.y > pageH-4*margin {
			w.page()
			w.header()
		}
		w.text("regular", 10, cols[0], clip(l.Description, 48))
		w.right("regular", 10, cols[2]-8, strconv.FormatInt(l.Quantity, 10))
		w.right("regular", 10, cols[3]-8, money(l.UnitAmount, c))
		w.right("regular", 10, cols[4]-8, l.VATRate.String()+"%")
		w.right("regular", 10, cols[5], money(l.Amount(), c))
		w.y += lineH + 2
	}
	w.rule()
	for _, row := range totalRows(inv) {
		font := "regular"
		if row.bold {
			font = "bold"
		}
		w.right(font, 11, cols[4]-8, row.label)
		w.right(font, 11, cols[5], row.value)
		w.y += lineH + 2
	}
	if m := inv.Memo(); m != nil {
		w.y += lineH
		w.text("regular", 10, margin, clip(*m, 100))
	}
	if w.err != nil {
		return nil, w.err
	}
	return pdf.GetBytesPdf(), nil
}

// totalRow is one line of the totals under the invoice's lines.
type totalRow struct {
	label, value string
	bold         bool
}

// totalRows are the invoice's totals: subtotal, VAT, total, the applied balance when the
// invoice met a customer balance (credit taken is negative, an amount owed added positive),
// the amount paid and the amount due.
func totalRows(inv *invoicing.Invoice) []totalRow {
	t, c := inv.Totals(), inv.Currency()
	rows := []totalRow{
		{"Subtotal", money(t.Subtotal, c), false},
		{"VAT", money(t.VAT, c), false},
		{"Total", money(t.Total, c), true},
	}
	if inv.TookBalance() {
		rows = append(rows, totalRow{"Applied balance", money(inv.AppliedBalance(), c), false})
	}
	return append(rows, totalRow{"Amount paid", money(inv.AmountPaid(), c), false},
		totalRow{"Amount due", money(inv.AmountDue(), c), true})
}

func statusText(inv *invoicing.Invoice) string {
	switch inv.Status() {
	case invoicing.StatusPaid:
		return "Paid"
	case invoicing.StatusVoid:
		return "Void"
	case invoicing.StatusDraft:
		return "Draft"
	case invoicing.StatusOpen, invoicing.StatusUncollectible:
	}
	return "Due"
}

func date(t *time.Time) string {
	if t == nil {
		return "—"
	}
	return t.UTC().Format("2 January 2006")
}

func money(amount int64, c core.Currency) string { return core.FormatAmount(amount, c) }

func clip(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}

// writer keeps the vertical position and the first error.
type writer struct {
	pdf *gopdf.GoPdf
	y   float64
	err error
}

func (w *writer) page() {
	w.pdf.AddPage()
	w.y = margin
}

func (w *writer) font(name string, size float64) {
	if w.err == nil {
		w.err = w.pdf.SetFont(name, "", size)
	}
}

func (w *writer) text(font string, size, x float64, s string) {
	w.font(font, size)
	if w.err != nil {
		return
	}
	w.pdf.SetXY(x, w.y)
	w.err = w.pdf.Text(s)
}

// right writes s ending at x.
func (w *writer) right(font string, size, x float64, s string) {
	w.font(font, size)
	if w.err != nil {
		return
	}
	width, err := w.pdf.MeasureTextWidth(s)
	if err != nil {
		w.err = fmt.Errorf("invoice pdf: %w", err)
		return
	}
	w.pdf.SetXY(x-width, w.y)
	w.err = w.pdf.Text(s)
}

func (w *writer) header() {
	w.text("bold", 10, cols[0], "Description")
	w.right("bold", 10, cols[2]-8, "Qty")
	w.right("bold", 10, cols[3]-8, "Unit price")
	w.right("bold", 10, cols[4]-8, "VAT")
	w.right("bold", 10, cols[5], "Amount")
	w.y += 6
	w.rule()
}

func (w *writer) rule() {
	w.pdf.SetLineWidth(0.5)
	w.pdf.Line(margin, w.y, pageW-margin, w.y)
	w.y += lineH
}

// FileName is the invoice's download name: its number (or its id for a draft) and ".pdf".
func FileName(inv *invoicing.Invoice) string {
	if n := inv.Number(); n != nil {
		return *n + ".pdf"
	}
	return inv.ID() + ".pdf"
}
