package invoicing

import (
	"fmt"

	"github.com/kassa-pay/kassa/ports"
)

// DocumentRenderer writes the PDF of an invoice (the PDF adapter) and names its file.
type DocumentRenderer func(*Hosted) (filename string, pdf []byte, err error)

// WithPDF makes the composer attach the invoice's PDF to the e-mail of a sent invoice
// (SentMail.PDF). The PDF is rendered when the mail is composed, by the mail worker, outside
// any transaction. It returns c.
func (c *SentComposer) WithPDF(render DocumentRenderer) *SentComposer {
	c.pdf = render
	return c
}

// attachPDF renders the PDF of h when the composer has a renderer; the zero Attachment when
// it has none. A failed rendering is returned as it is: the mail is tried again later.
func (c *SentComposer) attachPDF(h *Hosted) (ports.Attachment, error) {
	if c.pdf == nil {
		return ports.Attachment{}, nil
	}
	name, b, err := c.pdf(h)
	if err != nil {
		return ports.Attachment{}, fmt.Errorf("invoicing: PDF of %s: %w", h.Invoice.ID(), err)
	}
	return ports.Attachment{Filename: name, ContentType: "application/pdf", Data: b}, nil
}
