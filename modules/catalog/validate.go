package catalog

import (
	"math"
	"regexp"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/kassa-pay/kassa/core"
)

// Limits of the catalog's fields (interface 2.4, 2.5, 8; D13).
const (
	MaxNameLen                = 250
	MaxDescriptionLen         = 5000
	MaxImages                 = 8
	MaxUnitLabelLen           = 12
	MaxStatementDescriptorLen = 22
	MaxTags                   = 20
	MaxTagLen                 = 64
	MaxNicknameLen            = 250
	MaxLookupKeyLen           = 200
	MaxTrialPeriodDays        = 730
)

var taxCodeRE = regexp.MustCompile(`^txcd_[0-9A-Za-z]{1,40}$`)

func runes(s string) int { return utf8.RuneCountInString(s) }

// join builds a dotted param path: join("price", "unit_amount") = "price.unit_amount".
func join(prefix, field string) string {
	if prefix == "" {
		return field
	}
	return prefix + "." + field
}

func checkName(name, param string) (string, error) {
	if name == "" {
		return "", core.MissingField(param)
	}
	t := strings.TrimSpace(name)
	if t == "" || runes(t) > MaxNameLen {
		return "", core.InvalidField(param, "name must be 1 to %d characters.", MaxNameLen)
	}
	return t, nil
}

func checkImages(images []string) error {
	if len(images) > MaxImages {
		return core.InvalidField("images", "At most %d images are allowed.", MaxImages)
	}
	for i, img := range images {
		if err := core.CheckWebURL(img, "images."+strconv.Itoa(i)); err != nil {
			return err
		}
	}
	return nil
}

func checkTags(tags []string) error {
	if len(tags) > MaxTags {
		return core.InvalidField("tags", "At most %d tags are allowed.", MaxTags)
	}
	for i, t := range tags {
		if n := runes(t); n < 1 || n > MaxTagLen {
			return core.InvalidField("tags."+strconv.Itoa(i), "Each tag must be 1 to %d characters.", MaxTagLen)
		}
	}
	return nil
}

// checkOptional validates one optional product string field; "" means unset and is valid.
func checkOptional(field, v string) error {
	if v == "" {
		return nil
	}
	switch field {
	case "description":
		if runes(v) > MaxDescriptionLen {
			return core.InvalidField(field, "description must be at most %d characters.", MaxDescriptionLen)
		}
	case "tax_code":
		if !taxCodeRE.MatchString(v) {
			return core.InvalidField(field, "tax_code must look like txcd_12345678.")
		}
	case "unit_label":
		if runes(v) > MaxUnitLabelLen {
			return core.InvalidField(field, "unit_label must be at most %d characters.", MaxUnitLabelLen)
		}
	case "statement_descriptor":
		if strings.TrimSpace(v) == "" || runes(v) > MaxStatementDescriptorLen {
			return core.InvalidField(field, "statement_descriptor must be 1 to %d characters.", MaxStatementDescriptorLen)
		}
		if strings.ContainsAny(v, `<>\'"`) {
			return core.InvalidField(field, `statement_descriptor must not contain any of < > \ ' ".`)
		}
	case "url":
		return core.CheckWebURL(v, field)
	}
	return nil
}

func checkDimensions(d Dimensions) error {
	for _, f := range []struct {
		name string
		v    float64
	}{{"length", d.Length}, {"width", d.Width}, {"height", d.Height}, {"weight", d.Weight}} {
		if !(f.v > 0) || math.IsInf(f.v, 0) {
			return core.InvalidField("package_dimensions."+f.name, "package_dimensions.%s must be a positive number.", f.name)
		}
	}
	return nil
}

// mergeMetadata applies patch to base ("" deletes a key) and checks the result; base is not
// modified. Metadata errors carry the code metadata_invalid, with param `metadata` or
// `metadata.<key>`.
func mergeMetadata(base, patch map[string]string, prefix string) (map[string]string, error) {
	out := make(map[string]string, len(base)+len(patch))
	for k, v := range base {
		out[k] = v
	}
	for k, v := range patch {
		if v == "" {
			delete(out, k)
		} else {
			out[k] = v
		}
	}
	if err := core.CheckMetadata(out, join(prefix, "metadata")); err != nil {
		return nil, err
	}
	return out, nil
}

func cloneStrings(s []string) []string {
	if len(s) == 0 {
		return []string{}
	}
	return append([]string(nil), s...)
}

func cloneMap(m map[string]string) map[string]string {
	out := make(map[string]string, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}
