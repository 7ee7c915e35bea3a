package schema

import (
	"encoding/hex"
	"net"
	"net/mail"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// stringFormats are the formats kube keeps on string nodes (the
// apiextensions-apiserver's supported set at the current compatibility
// version; others are dropped and not checked), by name without dashes,
// with the checks of kube-openapi's strfmt.Default registry.
var stringFormats = map[string]func(string) bool{
	"bsonobjectid": isBSONObjectID,
	"uri":          func(s string) bool { _, err := url.ParseRequestURI(s); return err == nil },
	"email":        func(s string) bool { a, err := mail.ParseAddress(s); return err == nil && a.Address != "" },
	"hostname":     isHostname,
	"ipv4":         func(s string) bool { return sloppyIP(s) != nil && strings.Contains(s, ".") },
	"ipv6":         func(s string) bool { return net.ParseIP(s) != nil && strings.Contains(s, ":") },
	"cidr":         isSloppyCIDR,
	"mac":          func(s string) bool { _, err := net.ParseMAC(s); return err == nil },
	"uuid":         rxUUID.MatchString,
	"uuid3":        rxUUID3.MatchString,
	"uuid4":        rxUUID4.MatchString,
	"uuid5":        rxUUID5.MatchString,
	"isbn":         func(s string) bool { return isISBN(s, 10) || isISBN(s, 13) },
	"isbn10":       func(s string) bool { return isISBN(s, 10) },
	"isbn13":       func(s string) bool { return isISBN(s, 13) },
	"creditcard":   isCreditCard,
	"ssn":          func(s string) bool { return len(s) == 11 && rxSSN.MatchString(s) },
	"hexcolor":     rxHexcolor.MatchString,
	"rgbcolor":     rxRGBcolor.MatchString,
	"byte":         rxBase64.MatchString,
	"password":     func(string) bool { return true },
	"date":         isDate,
	"duration":     isDuration,
	"datetime":     isDateTime,
	"k8sshortname": func(s string) bool { return len(s) <= 63 && rxShortName.MatchString(s) },
	"k8slongname":  func(s string) bool { return len(s) <= 253 && rxLongName.MatchString(s) },
}

// checkFormat reports whether s has the (supported) format.
func checkFormat(format, s string) bool {
	f := stringFormats[strings.ReplaceAll(format, "-", "")]
	return f == nil || f(s)
}

// The patterns of kube-openapi's strfmt and its copy of govalidator.
var (
	rxHostname  = regexp.MustCompile(`^([a-zA-Z0-9\p{S}\p{L}]((-?[a-zA-Z0-9\p{S}\p{L}]{0,62})?)|([a-zA-Z0-9\p{S}\p{L}](([a-zA-Z0-9-\p{S}\p{L}]{0,61}[a-zA-Z0-9\p{S}\p{L}])?)(\.)){1,}([a-zA-Z\p{L}]){2,63})$`)
	rxUUID      = regexp.MustCompile(`(?i)^[0-9a-f]{8}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{12}$`)
	rxUUID3     = regexp.MustCompile(`(?i)^[0-9a-f]{8}-?[0-9a-f]{4}-?3[0-9a-f]{3}-?[0-9a-f]{4}-?[0-9a-f]{12}$`)
	rxUUID4     = regexp.MustCompile(`(?i)^[0-9a-f]{8}-?[0-9a-f]{4}-?4[0-9a-f]{3}-?[89ab][0-9a-f]{3}-?[0-9a-f]{12}$`)
	rxUUID5     = regexp.MustCompile(`(?i)^[0-9a-f]{8}-?[0-9a-f]{4}-?5[0-9a-f]{3}-?[89ab][0-9a-f]{3}-?[0-9a-f]{12}$`)
	rxCredit    = regexp.MustCompile(`^(?:4[0-9]{12}(?:[0-9]{3})?|5[1-5][0-9]{14}|6(?:011|5[0-9][0-9])[0-9]{12}|3[47][0-9]{13}|3(?:0[0-5]|[68][0-9])[0-9]{11}|(?:2131|1800|35\d{3})\d{11})$`)
	rxISBN10    = regexp.MustCompile(`^(?:[0-9]{9}X|[0-9]{10})$`)
	rxISBN13    = regexp.MustCompile(`^(?:[0-9]{13})$`)
	rxHexcolor  = regexp.MustCompile(`^#?([0-9a-fA-F]{3}|[0-9a-fA-F]{6})$`)
	rxRGBcolor  = regexp.MustCompile(`^rgb\(\s*(0|[1-9]\d?|1\d\d?|2[0-4]\d|25[0-5])\s*,\s*(0|[1-9]\d?|1\d\d?|2[0-4]\d|25[0-5])\s*,\s*(0|[1-9]\d?|1\d\d?|2[0-4]\d|25[0-5])\s*\)$`)
	rxBase64    = regexp.MustCompile(`^(?:[A-Za-z0-9+\/]{4})*(?:[A-Za-z0-9+\/]{2}==|[A-Za-z0-9+\/]{3}=|[A-Za-z0-9+\/]{4})$`)
	rxSSN       = regexp.MustCompile(`^\d{3}[- ]?\d{2}[- ]?\d{4}$`)
	rxNotDigit  = regexp.MustCompile(`[^0-9]+`)
	rxSpaceDash = regexp.MustCompile(`[\s-]+`)
	rxDateTime  = regexp.MustCompile(`^([0-9]{2}):([0-9]{2}):([0-9]{2})(.[0-9]+)?(z|([+-][0-9]{2}:[0-9]{2}))$`)
	rxDuration  = regexp.MustCompile(`((\d+)\s*([A-Za-zµ]+))`)
	rxShortName = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`)
	rxLongName  = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$`)
)

func isHostname(s string) bool {
	if !rxHostname.MatchString(s) || len(s) > 255 {
		return false
	}
	for _, p := range strings.Split(s, ".") {
		if len(p) > 63 {
			return false
		}
	}
	return true
}

func isBSONObjectID(s string) bool {
	b, err := hex.DecodeString(s)
	return err == nil && len(b) == 12
}

// isCreditCard is govalidator's IsCreditCard: the digits match a card
// pattern and pass the Luhn check.
func isCreditCard(s string) bool {
	d := rxNotDigit.ReplaceAllString(s, "")
	if !rxCredit.MatchString(d) {
		return false
	}
	sum, double := 0, false
	for i := len(d) - 1; i >= 0; i-- {
		n := int(d[i] - '0')
		if double {
			n *= 2
			if n >= 10 {
				n = n%10 + 1
			}
		}
		sum += n
		double = !double
	}
	return sum%10 == 0
}

// isISBN is govalidator's IsISBN for version 10 or 13.
func isISBN(s string, version int) bool {
	d := rxSpaceDash.ReplaceAllString(s, "")
	sum := 0
	if version == 10 {
		if !rxISBN10.MatchString(d) {
			return false
		}
		for i := 0; i < 9; i++ {
			sum += (i + 1) * int(d[i]-'0')
		}
		if d[9] == 'X' {
			sum += 100
		} else {
			sum += 10 * int(d[9]-'0')
		}
		return sum%11 == 0
	}
	if !rxISBN13.MatchString(d) {
		return false
	}
	for i := 0; i < 12; i++ {
		sum += []int{1, 3}[i%2] * int(d[i]-'0')
	}
	return int(d[12]-'0')-(10-sum%10)%10 == 0
}

func isDate(s string) bool {
	_, err := time.Parse("2006-01-02", s)
	return err == nil
}

// isDateTime is strfmt's IsDateTime: a full date, a "t", and a time of
// day with a zone.
func isDateTime(s string) bool {
	if len(s) < 4 {
		return false
	}
	p := strings.Split(strings.ToLower(s), "t")
	if len(p) < 2 || !isDate(p[0]) {
		return false
	}
	m := rxDateTime.FindStringSubmatch(p[1])
	if m == nil {
		return false
	}
	return m[1] <= "23" && m[2] <= "59" && m[3] <= "59"
}

// durationUnits are strfmt's unit spellings: a unit matches a variant
// exactly (ignoring case), or starts with the last one.
var durationUnits = [][]string{
	{"ns", "nano"}, {"us", "µs", "micro"}, {"ms", "milli"}, {"s", "sec"},
	{"m", "min"}, {"h", "hr", "hour"}, {"d", "day"}, {"w", "wk", "week"},
}

// isDuration is strfmt's ParseDuration without the value: Go's syntax,
// or numbers with units ("3 days 4h").
func isDuration(s string) bool {
	if _, err := time.ParseDuration(s); err == nil {
		return true
	}
	ok := false
	for _, m := range rxDuration.FindAllStringSubmatch(s, -1) {
		if _, err := strconv.Atoi(m[2]); err != nil {
			return false
		}
		unit := strings.ToLower(strings.TrimSpace(m[3]))
		for _, vs := range durationUnits {
			for i, v := range vs {
				if i == len(vs)-1 && strings.HasPrefix(unit, v) || strings.EqualFold(v, unit) {
					ok = true
				}
			}
		}
	}
	return ok
}

// sloppyIP is k8s.io/utils/net's ParseIPSloppy (Go 1.16's net.ParseIP):
// IPv4 parts may have leading zeros.
func sloppyIP(s string) net.IP {
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '.':
			return sloppyIPv4(s)
		case ':':
			return sloppyIPv6(s)
		}
	}
	return nil
}

func isSloppyCIDR(s string) bool {
	i := strings.IndexByte(s, '/')
	if i < 0 {
		return false
	}
	addr, mask := s[:i], s[i+1:]
	bits := 8 * net.IPv4len
	if sloppyIPv4(addr) == nil {
		bits = 8 * net.IPv6len
		if sloppyIPv6(addr) == nil {
			return false
		}
	}
	n, c, ok := dtoi(mask)
	return ok && c == len(mask) && n >= 0 && n <= bits
}

func sloppyIPv4(s string) net.IP {
	var p [net.IPv4len]byte
	for i := range p {
		if len(s) == 0 {
			return nil
		}
		if i > 0 {
			if s[0] != '.' {
				return nil
			}
			s = s[1:]
		}
		n, c, ok := dtoi(s)
		if !ok || n > 0xFF {
			return nil
		}
		s = s[c:]
		p[i] = byte(n)
	}
	if len(s) != 0 {
		return nil
	}
	return net.IPv4(p[0], p[1], p[2], p[3])
}

func sloppyIPv6(s string) net.IP {
	ip := make(net.IP, net.IPv6len)
	ellipsis := -1
	if len(s) >= 2 && s[0] == ':' && s[1] == ':' {
		ellipsis = 0
		s = s[2:]
		if len(s) == 0 {
			return ip
		}
	}
	i := 0
	for i < net.IPv6len {
		n, c, ok := xtoi(s)
		if !ok || n > 0xFFFF {
			return nil
		}
		if c < len(s) && s[c] == '.' {
			if ellipsis < 0 && i != net.IPv6len-net.IPv4len || i+net.IPv4len > net.IPv6len {
				return nil
			}
			ip4 := sloppyIPv4(s)
			if ip4 == nil {
				return nil
			}
			copy(ip[i:], ip4[12:16])
			s = ""
			i += net.IPv4len
			break
		}
		ip[i], ip[i+1] = byte(n>>8), byte(n)
		i += 2
		s = s[c:]
		if len(s) == 0 {
			break
		}
		if s[0] != ':' || len(s) == 1 {
			return nil
		}
		s = s[1:]
		if s[0] == ':' {
			if ellipsis >= 0 {
				return nil
			}
			ellipsis = i
			s = s[1:]
			if len(s) == 0 {
				break
			}
		}
	}
	if len(s) != 0 {
		return nil
	}
	if i < net.IPv6len {
		if ellipsis < 0 {
			return nil
		}
		n := net.IPv6len - i
		for j := i - 1; j >= ellipsis; j-- {
			ip[j+n] = ip[j]
		}
		for j := ellipsis + n - 1; j >= ellipsis; j-- {
			ip[j] = 0
		}
	} else if ellipsis >= 0 {
		return nil
	}
	return ip
}

// dtoi reads a decimal number at the start of s: its value, length and
// whether there was one (Go's net package, before 1.17).
func dtoi(s string) (n, i int, ok bool) {
	const big = 0xFFFFFF
	for i = 0; i < len(s) && '0' <= s[i] && s[i] <= '9'; i++ {
		n = n*10 + int(s[i]-'0')
		if n >= big {
			return big, i, false
		}
	}
	if i == 0 {
		return 0, 0, false
	}
	return n, i, true
}

// xtoi reads a hexadecimal number at the start of s.
func xtoi(s string) (n, i int, ok bool) {
	const big = 0xFFFFFF
	for i = 0; i < len(s); i++ {
		switch c := s[i]; {
		case '0' <= c && c <= '9':
			n = n*16 + int(c-'0')
		case 'a' <= c && c <= 'f':
			n = n*16 + int(c-'a') + 10
		case 'A' <= c && c <= 'F':
			n = n*16 + int(c-'A') + 10
		default:
			if i == 0 {
				return 0, i, false
			}
			return n, i, true
		}
		if n >= big {
			return 0, i, false
		}
	}
	if i == 0 {
		return 0, i, false
	}
	return n, i, true
}
