// Package pyyaml loads YAML the way the incumbent InferenceX tooling does:
// PyYAML's pure-Python SafeLoader (YAML 1.1 implicit typing), optionally with
// the repository's UniqueKeyLoader that rejects duplicate mapping keys.
//
// Parsing is done by gopkg.in/yaml.v3 (whose scanner is a port of libyaml,
// the same grammar PyYAML implements); this package then re-types every
// scalar with PyYAML's resolver and constructors and adds the checks where
// the two libraries disagree:
//
//   - plain scalars resolve by YAML 1.1 rules: yes/no/on/off are booleans,
//     1e3 and 08 are strings, 0o17 is a string, 1:30 is 90, 2024-01-01 is a
//     date, "=" is an error, "" and ~ are null;
//   - duplicate mapping keys: last wins (SafeLoader) or an error
//     (UniqueKeyLoader); keys compare with Python equality (1 == 1.0 == true);
//   - merge keys "<<" flatten as in SafeLoader and are an error under
//     UniqueKeyLoader (it has no merge support);
//   - a stream holding more than one document is an error;
//   - characters PyYAML's reader refuses are errors, as are tabs anywhere
//     but inside quoted scalars, block scalar bodies and comments (PyYAML's
//     scanner never skips a tab between tokens).
//
// Values keep the line and column of their node, so callers can point at
// the offending line.
//
// Inline constructs the common one-line shapes (a scalar, a flow list or
// mapping of scalars) without the parser, with the values Load gives them;
// callers that load many small pieces (the versions of a recipe) use it
// first.
//
// Dependencies: gopkg.in/yaml.v3.
package pyyaml

import (
	"bytes"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"math"
	"math/big"
	"regexp"
	"strconv"
	"strings"
	"unicode/utf8"

	"gopkg.in/yaml.v3"
)

// Kind is the Python type a YAML node constructs to.
type Kind uint8

// Python types produced by SafeLoader.
const (
	Null      Kind = iota // None
	Bool                  // bool
	Int                   // int
	Float                 // float
	Str                   // str
	Bytes                 // bytes (!!binary)
	Timestamp             // datetime.date / datetime.datetime
	Seq                   // list
	Map                   // dict
	Set                   // set (!!set)
)

var kindNames = [...]string{"None", "bool", "int", "float", "str", "bytes", "datetime", "list", "dict", "set"}

func (k Kind) String() string {
	if int(k) < len(kindNames) {
		return kindNames[k]
	}
	return "?"
}

// Value is a constructed YAML value.
type Value struct {
	Kind  Kind
	Bool  bool
	Int   *big.Int
	Float float64
	Str   string // str, bytes content, or the timestamp's canonical text
	Items []*Value
	Pairs []Pair // dict entries in insertion order, keys unique
	// Line and Column (1-based) of the node in the source.
	Line, Column int
}

// Pair is one dict entry; Key.Line is the line of the key.
type Pair struct {
	Key, Value *Value
}

// Get returns the value stored under the string key k.
func (v *Value) Get(k string) (*Value, bool) {
	if v == nil || v.Kind != Map {
		return nil, false
	}
	for _, p := range v.Pairs {
		if p.Key.Kind == Str && p.Key.Str == k {
			return p.Value, true
		}
	}
	return nil, false
}

// Truthy reports Python truthiness.
func (v *Value) Truthy() bool {
	switch v.Kind {
	case Null:
		return false
	case Bool:
		return v.Bool
	case Int:
		return v.Int.Sign() != 0
	case Float:
		return v.Float != 0
	case Str, Bytes:
		return v.Str != ""
	case Seq:
		return len(v.Items) > 0
	case Map:
		return len(v.Pairs) > 0
	case Set:
		return len(v.Items) > 0
	}
	return true
}

// Repr renders the value the way Python's repr would (approximately; used
// in messages).
func (v *Value) Repr() string {
	switch v.Kind {
	case Null:
		return "None"
	case Bool:
		if v.Bool {
			return "True"
		}
		return "False"
	case Int:
		return v.Int.String()
	case Float:
		return formatFloat(v.Float)
	case Str:
		return pyQuote(v.Str)
	case Bytes:
		return "b" + pyQuote(v.Str)
	case Timestamp:
		return v.Str
	case Seq, Set:
		parts := make([]string, len(v.Items))
		for i, it := range v.Items {
			parts[i] = it.Repr()
		}
		if v.Kind == Set {
			return "{" + strings.Join(parts, ", ") + "}"
		}
		return "[" + strings.Join(parts, ", ") + "]"
	case Map:
		parts := make([]string, len(v.Pairs))
		for i, p := range v.Pairs {
			parts[i] = p.Key.Repr() + ": " + p.Value.Repr()
		}
		return "{" + strings.Join(parts, ", ") + "}"
	}
	return "?"
}

func pyQuote(s string) string {
	q := "'"
	if strings.Contains(s, "'") && !strings.Contains(s, `"`) {
		q = `"`
	}
	var b strings.Builder
	b.WriteString(q)
	for _, r := range s {
		switch {
		case r == '\\':
			b.WriteString(`\\`)
		case string(r) == q:
			b.WriteString(`\` + q)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\t':
			b.WriteString(`\t`)
		case r == '\r':
			b.WriteString(`\r`)
		case r < 0x20 || r == 0x7f:
			fmt.Fprintf(&b, `\x%02x`, r)
		default:
			b.WriteRune(r)
		}
	}
	b.WriteString(q)
	return b.String()
}

func formatFloat(f float64) string {
	switch {
	case math.IsInf(f, 1):
		return "inf"
	case math.IsInf(f, -1):
		return "-inf"
	case math.IsNaN(f):
		return "nan"
	}
	s := strconv.FormatFloat(f, 'g', -1, 64)
	if !strings.ContainsAny(s, ".eEn") {
		s += ".0"
	}
	return s
}

// Equal reports Python == between two values.
func Equal(a, b *Value) bool {
	if a == nil || b == nil {
		return a == b
	}
	if na, ok := numeric(a); ok {
		nb, ok := numeric(b)
		return ok && na.Cmp(nb) == 0 && !(a.Kind == Float && math.IsNaN(a.Float)) && !(b.Kind == Float && math.IsNaN(b.Float))
	}
	if a.Kind != b.Kind {
		return false
	}
	switch a.Kind {
	case Null:
		return true
	case Str, Bytes, Timestamp:
		return a.Str == b.Str
	case Seq:
		if len(a.Items) != len(b.Items) {
			return false
		}
		for i := range a.Items {
			if !Equal(a.Items[i], b.Items[i]) {
				return false
			}
		}
		return true
	case Set:
		return setEqual(a.Items, b.Items)
	case Map:
		if len(a.Pairs) != len(b.Pairs) {
			return false
		}
		for _, p := range a.Pairs {
			q, ok := lookup(b, p.Key)
			if !ok || !Equal(p.Value, q) {
				return false
			}
		}
		return true
	}
	return false
}

func setEqual(a, b []*Value) bool {
	if len(a) != len(b) {
		return false
	}
	for _, x := range a {
		found := false
		for _, y := range b {
			if Equal(x, y) {
				found = true
				break
			}
		}
		if !found {
			return false
		}
	}
	return true
}

func lookup(m *Value, k *Value) (*Value, bool) {
	kk, err := hashKey(k)
	if err != nil {
		return nil, false
	}
	for _, p := range m.Pairs {
		if pk, err := hashKey(p.Key); err == nil && pk == kk {
			return p.Value, true
		}
	}
	return nil, false
}

// numeric returns bool/int/float as an exact rational.
func numeric(v *Value) (*big.Rat, bool) {
	switch v.Kind {
	case Bool:
		if v.Bool {
			return big.NewRat(1, 1), true
		}
		return new(big.Rat), true
	case Int:
		return new(big.Rat).SetInt(v.Int), true
	case Float:
		if math.IsInf(v.Float, 0) || math.IsNaN(v.Float) {
			// compare infinities by sign only
			r := big.NewRat(int64(math.MaxInt64), 1)
			r.Mul(r, r)
			if math.IsInf(v.Float, -1) {
				r.Neg(r)
			}
			return r, true
		}
		r, _ := new(big.Rat).SetString(strconv.FormatFloat(v.Float, 'g', -1, 64))
		return r, r != nil
	}
	return nil, false
}

// hashKey gives the dict identity of a hashable value (Python hash/eq).
func hashKey(v *Value) (string, error) {
	if r, ok := numeric(v); ok {
		if v.Kind == Float && math.IsNaN(v.Float) {
			return fmt.Sprintf("nan:%p", v), nil
		}
		if v.Kind == Float && math.IsInf(v.Float, 0) {
			return "n:" + formatFloat(v.Float), nil
		}
		return "n:" + r.RatString(), nil
	}
	switch v.Kind {
	case Null:
		return "z", nil
	case Str:
		return "s:" + v.Str, nil
	case Bytes:
		return "b:" + v.Str, nil
	case Timestamp:
		return "t:" + v.Str, nil
	}
	return "", errUnhashable
}

var errUnhashable = errors.New("unhashable")

// Error is a load error with the (1-based) position PyYAML would report.
type Error struct {
	Line, Column int
	Msg          string
	// Duplicate is set for UniqueKeyLoader's duplicate-key error.
	Duplicate bool
}

func (e *Error) Error() string {
	if e.Line > 0 {
		return fmt.Sprintf("line %d: %s", e.Line, e.Msg)
	}
	return e.Msg
}

// Options selects the loader.
type Options struct {
	// UniqueKeys rejects duplicate mapping keys and merge keys, as the
	// repository's UniqueKeyLoader does; otherwise later keys win.
	UniqueKeys bool
}

// Load parses one YAML document (an empty stream is None).
func Load(data []byte, opt Options) (*Value, error) {
	if err := checkReader(data); err != nil {
		return nil, err
	}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var doc yaml.Node
	err := dec.Decode(&doc)
	if errors.Is(err, io.EOF) {
		return &Value{Kind: Null}, nil
	}
	if err != nil {
		return nil, yamlErr(err)
	}
	var extra yaml.Node
	if err := dec.Decode(&extra); err == nil {
		return nil, &Error{Line: extra.Line, Msg: "expected a single document in the stream"}
	} else if !errors.Is(err, io.EOF) {
		return nil, yamlErr(err)
	}
	if err := checkTabs(data, &doc); err != nil {
		return nil, err
	}
	c := &constructor{opt: opt, done: map[*yaml.Node]*Value{}}
	root := &doc
	if root.Kind == yaml.DocumentNode {
		if len(root.Content) == 0 {
			return &Value{Kind: Null}, nil
		}
		root = root.Content[0]
	}
	v, err := c.construct(root)
	if err != nil || c.aliases == 0 {
		return v, err
	}
	if expanded(v, map[*Value]int64{}, maxExpanded) > maxExpanded {
		return nil, &Error{Line: root.Line, Column: root.Column,
			Msg: fmt.Sprintf("the document's aliases expand it to more than %d nodes", maxExpanded)}
	}
	return v, nil
}

var yamlLine = regexp.MustCompile(`^yaml: line (\d+): (.*)$`)

func yamlErr(err error) error {
	msg := err.Error()
	if m := yamlLine.FindStringSubmatch(msg); m != nil {
		n, _ := strconv.Atoi(m[1])
		return &Error{Line: n, Msg: m[2]}
	}
	return &Error{Msg: strings.TrimPrefix(msg, "yaml: ")}
}

// checkReader applies PyYAML's Reader.check_printable to the whole stream.
func checkReader(data []byte) error {
	line := 1
	col := 0
	for i := 0; i < len(data); {
		r, size := utf8.DecodeRune(data[i:])
		if r == utf8.RuneError && size <= 1 {
			return &Error{Line: line, Column: col + 1, Msg: fmt.Sprintf("invalid UTF-8 byte %#x", data[i])}
		}
		if !printable(r) {
			return &Error{Line: line, Column: col + 1, Msg: fmt.Sprintf("unacceptable character #x%04x: special characters are not allowed", r)}
		}
		if r == '\n' {
			line++
			col = 0
		} else {
			col++
		}
		i += size
	}
	return nil
}

func printable(r rune) bool {
	switch {
	case r == 0x09 || r == 0x0A || r == 0x0D:
		return true
	case r >= 0x20 && r <= 0x7E:
		return true
	case r == 0x85:
		return true
	case r >= 0xA0 && r <= 0xD7FF:
		return true
	case r >= 0xE000 && r <= 0xFFFD:
		return true
	case r >= 0x10000 && r <= 0x10FFFF:
		return true
	}
	return false
}

type constructor struct {
	opt     Options
	done    map[*yaml.Node]*Value
	aliases int // alias nodes met: the document may be smaller than its value
}

// maxExpanded bounds the nodes of a document's value counted with every
// alias expanded, as any reader of the value (a JSON dump, a walk over
// its fields) sees it: a few hundred bytes of nested aliases (the
// "billion laughs") expand to billions of nodes. PyYAML has no such bound,
// and its users' dumps hang; yaml.v3 refuses such documents too.
const maxExpanded = 1 << 22

// expanded counts v's nodes with aliases expanded, stopping past limit
// (shared values are counted once per use, but walked once).
func expanded(v *Value, memo map[*Value]int64, limit int64) int64 {
	if n, ok := memo[v]; ok {
		return n
	}
	n := int64(1)
	for _, it := range v.Items {
		n += expanded(it, memo, limit)
		if n > limit {
			break
		}
	}
	for _, p := range v.Pairs {
		if n > limit {
			break
		}
		n += expanded(p.Key, memo, limit) + expanded(p.Value, memo, limit)
	}
	n = min(n, limit+1)
	memo[v] = n
	return n
}

func (c *constructor) construct(n *yaml.Node) (*Value, error) {
	if v, ok := c.done[n]; ok {
		return v, nil
	}
	var v *Value
	var err error
	switch n.Kind {
	case yaml.AliasNode:
		if n.Alias == nil {
			return nil, &Error{Line: n.Line, Column: n.Column, Msg: "found undefined alias"}
		}
		c.aliases++
		return c.construct(n.Alias)
	case yaml.ScalarNode:
		v, err = c.scalar(n)
	case yaml.SequenceNode:
		v, err = c.sequence(n)
	case yaml.MappingNode:
		v, err = c.mapping(n)
	case yaml.DocumentNode:
		if len(n.Content) == 0 {
			return &Value{Kind: Null}, nil
		}
		return c.construct(n.Content[0])
	default:
		return nil, &Error{Line: n.Line, Msg: "unexpected node"}
	}
	if err != nil {
		return nil, err
	}
	v.Line, v.Column = n.Line, n.Column
	c.done[n] = v
	return v, nil
}

func explicitTag(n *yaml.Node) (string, bool) {
	if n.Style&yaml.TaggedStyle == 0 {
		return "", false
	}
	return n.Tag, true
}

func (c *constructor) sequence(n *yaml.Node) (*Value, error) {
	if tag, ok := explicitTag(n); ok && tag != "!!seq" {
		switch tag {
		case "!!omap", "!!pairs":
			// list of single-pair mappings → list of (k, v) tuples; kept as a
			// list of two-item lists, which no caller relies on.
		default:
			return nil, constructorErr(n, tag)
		}
	}
	v := &Value{Kind: Seq, Items: make([]*Value, 0, len(n.Content))}
	for _, it := range n.Content {
		x, err := c.construct(it)
		if err != nil {
			return nil, err
		}
		v.Items = append(v.Items, x)
	}
	return v, nil
}

func constructorErr(n *yaml.Node, tag string) error {
	return &Error{Line: n.Line, Column: n.Column, Msg: fmt.Sprintf("could not determine a constructor for the tag %q", longTag(tag))}
}

func longTag(t string) string {
	if strings.HasPrefix(t, "!!") {
		return "tag:yaml.org,2002:" + t[2:]
	}
	return t
}

func isMergeKey(k *yaml.Node) bool {
	if k.Kind != yaml.ScalarNode {
		return false
	}
	if tag, ok := explicitTag(k); ok {
		return tag == "!!merge"
	}
	return k.Style == 0 && k.Value == "<<"
}

func isValueKey(k *yaml.Node) bool {
	if k.Kind != yaml.ScalarNode {
		return false
	}
	if tag, ok := explicitTag(k); ok {
		return tag == "!!value"
	}
	return k.Style == 0 && k.Value == "="
}

// flatten is SafeConstructor.flatten_mapping: it returns the key/value node
// pairs with merged mappings first.
func (c *constructor) flatten(n *yaml.Node) ([][2]*yaml.Node, error) {
	var merge, own [][2]*yaml.Node
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, val := n.Content[i], n.Content[i+1]
		if isMergeKey(k) {
			target := val
			if target.Kind == yaml.AliasNode && target.Alias != nil {
				target = target.Alias
			}
			switch target.Kind {
			case yaml.MappingNode:
				sub, err := c.flatten(target)
				if err != nil {
					return nil, err
				}
				merge = append(merge, sub...)
			case yaml.SequenceNode:
				var subs [][][2]*yaml.Node
				for _, s := range target.Content {
					if s.Kind == yaml.AliasNode && s.Alias != nil {
						s = s.Alias
					}
					if s.Kind != yaml.MappingNode {
						return nil, &Error{Line: s.Line, Column: s.Column, Msg: "while constructing a mapping: expected a mapping for merging"}
					}
					sub, err := c.flatten(s)
					if err != nil {
						return nil, err
					}
					subs = append(subs, sub)
				}
				for i := len(subs) - 1; i >= 0; i-- {
					merge = append(merge, subs[i]...)
				}
			default:
				return nil, &Error{Line: val.Line, Column: val.Column, Msg: "while constructing a mapping: expected a mapping or list of mappings for merging"}
			}
			continue
		}
		own = append(own, [2]*yaml.Node{k, val})
	}
	return append(merge, own...), nil
}

func (c *constructor) mapping(n *yaml.Node) (*Value, error) {
	tag, tagged := explicitTag(n)
	if tagged && tag != "!!map" && tag != "!!set" {
		return nil, constructorErr(n, tag)
	}
	var pairs [][2]*yaml.Node
	if c.opt.UniqueKeys {
		for i := 0; i+1 < len(n.Content); i += 2 {
			pairs = append(pairs, [2]*yaml.Node{n.Content[i], n.Content[i+1]})
		}
	} else {
		var err error
		if pairs, err = c.flatten(n); err != nil {
			return nil, err
		}
	}
	v := &Value{Kind: Map}
	if tagged && tag == "!!set" {
		v.Kind = Set
	}
	index := map[string]int{}
	for _, kv := range pairs {
		var k *Value
		var err error
		if !c.opt.UniqueKeys && isValueKey(kv[0]) {
			k = &Value{Kind: Str, Str: kv[0].Value, Line: kv[0].Line, Column: kv[0].Column}
		} else if k, err = c.construct(kv[0]); err != nil {
			return nil, err
		}
		hk, err := hashKey(k)
		if err != nil {
			return nil, &Error{Line: kv[0].Line, Column: kv[0].Column, Msg: "while constructing a mapping: found unhashable key"}
		}
		if _, dup := index[hk]; dup && c.opt.UniqueKeys {
			return nil, &Error{Line: kv[0].Line, Column: kv[0].Column, Duplicate: true,
				Msg: fmt.Sprintf("while constructing a mapping: found duplicate key %s", k.Repr())}
		}
		val, err := c.construct(kv[1])
		if err != nil {
			return nil, err
		}
		if v.Kind == Set {
			val = &Value{Kind: Null}
		}
		if i, dup := index[hk]; dup {
			v.Pairs[i].Value = val // last wins, first position kept
			continue
		}
		index[hk] = len(v.Pairs)
		v.Pairs = append(v.Pairs, Pair{Key: k, Value: val})
	}
	if v.Kind == Set {
		for _, p := range v.Pairs {
			v.Items = append(v.Items, p.Key)
		}
		v.Pairs = nil
	}
	return v, nil
}

// YAML 1.1 implicit resolvers, exactly as PyYAML's resolver.py registers them.
var (
	reBool  = regexp.MustCompile(`^(?:yes|Yes|YES|no|No|NO|true|True|TRUE|false|False|FALSE|on|On|ON|off|Off|OFF)$`)
	reFloat = regexp.MustCompile(`^(?:[-+]?(?:[0-9][0-9_]*)\.[0-9_]*(?:[eE][-+][0-9]+)?|\.[0-9][0-9_]*(?:[eE][-+][0-9]+)?|[-+]?[0-9][0-9_]*(?::[0-5]?[0-9])+\.[0-9_]*|[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN))$`)
	reInt   = regexp.MustCompile(`^(?:[-+]?0b[0-1_]+|[-+]?0[0-7_]+|[-+]?(?:0|[1-9][0-9_]*)|[-+]?0x[0-9a-fA-F_]+|[-+]?[1-9][0-9_]*(?::[0-5]?[0-9])+)$`)
	reNull  = regexp.MustCompile(`^(?:~|null|Null|NULL|)$`)
	reTime  = regexp.MustCompile(`^(?:[0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9]|[0-9][0-9][0-9][0-9]-[0-9][0-9]?-[0-9][0-9]?(?:[Tt]|[ \t]+)[0-9][0-9]?:[0-9][0-9]:[0-9][0-9](?:\.[0-9]*)?(?:[ \t]*(?:Z|[-+][0-9][0-9]?(?::[0-9][0-9])?))?)$`)
	reValue = regexp.MustCompile(`^(?:=)$`)
	reMerge = regexp.MustCompile(`^(?:<<)$`)
)

// Resolve returns the YAML 1.1 tag PyYAML gives a plain scalar: the
// first of PyYAML's implicit resolvers, in its order, that matches. The
// booleans, nulls, "<<" and "=" are whole words; a number or a timestamp
// begins with a digit, a sign or a dot and has none but a few characters;
// a run of decimal digits is an int (as the int resolver says) unless an
// octal-looking one: those answers skip the regular expressions, which
// every other candidate goes through.
func Resolve(s string) string {
	switch s {
	case "":
		return "!!null"
	case "yes", "Yes", "YES", "no", "No", "NO", "true", "True", "TRUE", "false", "False", "FALSE", "on", "On", "ON", "off", "Off", "OFF":
		return "!!bool"
	case "~", "null", "Null", "NULL":
		return "!!null"
	case "<<":
		return "!!merge"
	case "=":
		return "!!value"
	}
	c := s[0]
	if !(c >= '0' && c <= '9' || c == '-' || c == '+' || c == '.') {
		return "!!str"
	}
	digits := true
	for i := 0; i < len(s); i++ {
		b := s[i]
		if b < '0' || b > '9' {
			digits = false
			if !numberChars[b] {
				return "!!str"
			}
		}
	}
	switch {
	case digits && (c != '0' || len(s) == 1):
		return "!!int"
	case reFloat.MatchString(s):
		return "!!float"
	case c != '.' && reInt.MatchString(s):
		return "!!int"
	case c >= '0' && c <= '9' && reTime.MatchString(s):
		return "!!timestamp"
	}
	return "!!str"
}

// numberChars holds the characters, digits aside, that a float, an int or a
// timestamp of PyYAML's resolvers may have.
var numberChars = func() (t [256]bool) {
	for _, b := range []byte("+-._:eExbacdefABCDEFinfINFaNtTZ \t") {
		t[b] = true
	}
	return t
}()

func (c *constructor) scalar(n *yaml.Node) (*Value, error) {
	tag, tagged := explicitTag(n)
	if !tagged {
		if n.Style&(yaml.DoubleQuotedStyle|yaml.SingleQuotedStyle|yaml.LiteralStyle|yaml.FoldedStyle) != 0 {
			tag = "!!str"
		} else {
			tag = Resolve(n.Value)
		}
	}
	v, err := scalar(tag, n.Value)
	var e *Error
	switch {
	case errors.As(err, &e):
		e.Line, e.Column = n.Line, n.Column
	case errors.Is(err, errNoConstructor):
		return nil, constructorErr(n, tag)
	}
	return v, err
}

var errNoConstructor = errors.New("no constructor")

// scalar constructs the value of a scalar whose tag is known (explicit, or
// resolved from a plain scalar). An unknown tag is errNoConstructor.
func scalar(tag, s string) (*Value, error) {
	bad := func(what string) error {
		return &Error{Msg: fmt.Sprintf("invalid %s value %q", what, s)}
	}
	switch tag {
	case "!!str":
		return &Value{Kind: Str, Str: s}, nil
	case "!!null":
		return &Value{Kind: Null}, nil
	case "!!bool":
		switch strings.ToLower(s) {
		case "yes", "true", "on":
			return &Value{Kind: Bool, Bool: true}, nil
		case "no", "false", "off":
			return &Value{Kind: Bool, Bool: false}, nil
		}
		return nil, bad("bool")
	case "!!int":
		i, ok := constructInt(s)
		if !ok {
			return nil, bad("int")
		}
		return &Value{Kind: Int, Int: i}, nil
	case "!!float":
		f, ok := constructFloat(s)
		if !ok {
			return nil, bad("float")
		}
		return &Value{Kind: Float, Float: f}, nil
	case "!!timestamp":
		t, ok := constructTimestamp(s)
		if !ok {
			return nil, bad("timestamp")
		}
		return &Value{Kind: Timestamp, Str: t}, nil
	case "!!binary":
		b, err := base64.StdEncoding.DecodeString(strings.Map(func(r rune) rune {
			if r == ' ' || r == '\n' || r == '\t' || r == '\r' {
				return -1
			}
			return r
		}, s))
		if err != nil {
			return nil, &Error{Msg: "failed to decode base64 data"}
		}
		return &Value{Kind: Bytes, Str: string(b)}, nil
	}
	return nil, errNoConstructor
}

func constructInt(s string) (*big.Int, bool) {
	v := strings.ReplaceAll(s, "_", "")
	if v == "" {
		return nil, false
	}
	sign := 1
	if v[0] == '-' {
		sign = -1
	}
	if v[0] == '+' || v[0] == '-' {
		v = v[1:]
	}
	out := new(big.Int)
	var ok bool
	switch {
	case v == "0":
		return out, true
	case strings.HasPrefix(v, "0b"):
		_, ok = out.SetString(v[2:], 2)
	case strings.HasPrefix(v, "0x"):
		_, ok = out.SetString(v[2:], 16)
	case v != "" && v[0] == '0':
		_, ok = out.SetString(v, 8)
	case strings.Contains(v, ":"):
		base := big.NewInt(1)
		parts := strings.Split(v, ":")
		for i := len(parts) - 1; i >= 0; i-- {
			d, good := new(big.Int).SetString(parts[i], 10)
			if !good {
				return nil, false
			}
			out.Add(out, d.Mul(d, base))
			base = new(big.Int).Mul(base, big.NewInt(60))
		}
		ok = true
	default:
		_, ok = out.SetString(v, 10)
	}
	if !ok {
		return nil, false
	}
	if sign < 0 {
		out.Neg(out)
	}
	return out, true
}

func constructFloat(s string) (float64, bool) {
	v := strings.ToLower(strings.ReplaceAll(s, "_", ""))
	if v == "" {
		return 0, false
	}
	sign := 1.0
	if v[0] == '-' {
		sign = -1
	}
	if v[0] == '+' || v[0] == '-' {
		v = v[1:]
	}
	switch {
	case v == ".inf":
		return sign * math.Inf(1), true
	case v == ".nan":
		return math.NaN(), true
	case strings.Contains(v, ":"):
		base, out := 1.0, 0.0
		parts := strings.Split(v, ":")
		for i := len(parts) - 1; i >= 0; i-- {
			d, err := strconv.ParseFloat(parts[i], 64)
			if err != nil {
				return 0, false
			}
			out += d * base
			base *= 60
		}
		return sign * out, true
	}
	f, err := strconv.ParseFloat(v, 64)
	if err != nil {
		var ne *strconv.NumError
		if errors.As(err, &ne) && errors.Is(ne.Err, strconv.ErrRange) {
			return sign * f, true // Python: float('1e999') == inf
		}
		return 0, false
	}
	return sign * f, true
}

var reTimeParts = regexp.MustCompile(`^([0-9][0-9][0-9][0-9])-([0-9][0-9]?)-([0-9][0-9]?)(?:(?:[Tt]|[ \t]+)([0-9][0-9]?):([0-9][0-9]):([0-9][0-9])(?:\.([0-9]*))?(?:[ \t]*(Z|([-+])([0-9][0-9]?)(?::([0-9][0-9]))?))?)?$`)

// constructTimestamp validates a timestamp as Python's date/datetime would
// and returns a canonical text for equality.
func constructTimestamp(s string) (string, bool) {
	m := reTimeParts.FindStringSubmatch(s)
	if m == nil {
		return "", false
	}
	atoi := func(x string) int { n, _ := strconv.Atoi(x); return n }
	y, mo, d := atoi(m[1]), atoi(m[2]), atoi(m[3])
	if mo < 1 || mo > 12 || d < 1 || d > daysIn(y, mo) {
		return "", false
	}
	if m[4] == "" {
		return fmt.Sprintf("date:%04d-%02d-%02d", y, mo, d), true
	}
	h, mi, se := atoi(m[4]), atoi(m[5]), atoi(m[6])
	if h > 23 || mi > 59 || se > 59 {
		return "", false
	}
	frac := m[7]
	for len(frac) < 6 {
		frac += "0"
	}
	frac = frac[:6]
	tz := ""
	if m[8] != "" {
		if m[8] == "Z" {
			tz = "+00:00"
		} else {
			tz = fmt.Sprintf("%s%02d:%02d", m[9], atoi(m[10]), atoi(m[11]))
		}
	}
	return fmt.Sprintf("datetime:%04d-%02d-%02dT%02d:%02d:%02d.%s%s", y, mo, d, h, mi, se, frac, tz), true
}

func daysIn(y, m int) int {
	switch m {
	case 2:
		if y%4 == 0 && (y%100 != 0 || y%400 == 0) {
			return 29
		}
		return 28
	case 4, 6, 9, 11:
		return 30
	}
	return 31
}
