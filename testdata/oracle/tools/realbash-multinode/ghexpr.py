"""Small evaluator for GitHub Actions ${{ }} expressions.

Follows the documented GitHub semantics:
  * literals: null, true, false, numbers (int/float/hex/exponent), 'strings' ('' escapes ')
  * property dereference a.b (names may contain '-'), a['b'], a[0], filter a.*.b
  * operators ( ) [ ] . ! < <= > >= == != && ||  (that precedence)
  * && / || return an operand, not a boolean
  * falsy: false, 0, -0, '', null, NaN
  * == / != : same type -> compare (strings case-insensitive); different types ->
    both coerced to numbers (null->0, bool->1/0, string->parsed or NaN, array/object->NaN)
  * property names are case-insensitive
  * functions: format, toJSON, fromJSON, contains, startsWith, endsWith, join,
    always/success/failure/cancelled
Placeholder contexts (runner, secrets, github, vars) evaluate to the literal
string '{context.path}'.
"""
import json, math, re


class ExprError(Exception):
    pass


class Placeholder:
    """A value from a context we cannot know (runner/secrets/github/vars)."""
    def __init__(self, path):
        self.path = path

    def child(self, name):
        return Placeholder(f'{self.path}.{name}')

    def text(self):
        return '{' + self.path + '}'


def realize(v):
    if isinstance(v, Placeholder):
        return v.text()
    return v


# ---------------------------------------------------------------- conversions
def fmt_number(x):
    if isinstance(x, bool):
        raise TypeError
    if isinstance(x, int):
        return str(x)
    if math.isnan(x):
        return 'NaN'
    if math.isinf(x):
        return 'Infinity' if x > 0 else '-Infinity'
    if x == int(x) and abs(x) < 1e15:
        return str(int(x))
    return format(x, '.15g')


def to_str(v):
    v = realize(v)
    if v is None:
        return ''
    if v is True:
        return 'true'
    if v is False:
        return 'false'
    if isinstance(v, (int, float)):
        return fmt_number(v)
    if isinstance(v, str):
        return v
    if isinstance(v, list):
        return 'Array'
    if isinstance(v, dict):
        return 'Object'
    raise ExprError(f'cannot stringify {v!r}')


_numrx = re.compile(r'^[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?$')


def to_num(v):
    v = realize(v)
    if v is None:
        return 0
    if v is True:
        return 1
    if v is False:
        return 0
    if isinstance(v, (int, float)):
        return v
    if isinstance(v, str):
        s = v.strip()
        if s == '':
            return 0
        if re.match(r'^0x[0-9a-fA-F]+$', s):
            return int(s, 16)
        if re.match(r'^0o[0-7]+$', s):
            return int(s[2:], 8)
        if _numrx.match(s):
            f = float(s)
            return int(f) if f == int(f) and 'e' not in s.lower() and '.' not in s else f
        if s in ('Infinity', '+Infinity'):
            return math.inf
        if s == '-Infinity':
            return -math.inf
        return math.nan
    return math.nan


def truthy(v):
    v = realize(v)
    if v is None or v is False:
        return False
    if v is True:
        return True
    if isinstance(v, (int, float)):
        return not (v == 0 or (isinstance(v, float) and math.isnan(v)))
    if isinstance(v, str):
        return v != ''
    return True


def kind(v):
    if v is None:
        return 'null'
    if isinstance(v, bool):
        return 'bool'
    if isinstance(v, (int, float)):
        return 'num'
    if isinstance(v, str):
        return 'str'
    if isinstance(v, list):
        return 'array'
    return 'object'


def loose_eq(a, b):
    a, b = realize(a), realize(b)
    ka, kb = kind(a), kind(b)
    if ka != kb:
        x, y = to_num(a), to_num(b)
        if isinstance(x, float) and math.isnan(x) or isinstance(y, float) and math.isnan(y):
            return False
        return x == y
    if ka == 'null':
        return True
    if ka == 'str':
        return a.casefold() == b.casefold()
    if ka in ('num', 'bool'):
        return a == b
    return a is b


def compare(a, b):
    """returns -1/0/1 or None (NaN / incomparable)"""
    a, b = realize(a), realize(b)
    ka, kb = kind(a), kind(b)
    if ka == kb == 'str':
        x, y = a.casefold(), b.casefold()
    else:
        x, y = to_num(a), to_num(b)
        if any(isinstance(t, float) and math.isnan(t) for t in (x, y)):
            return None
    return (x > y) - (x < y)


def to_json(v, indent=0):
    """GitHub toJSON: 2-space indented JSON (Newtonsoft style)."""
    v = realize(v)
    pad = '  ' * indent
    if isinstance(v, dict):
        if not v:
            return '{}'
        items = [f'{pad}  {json.dumps(k, ensure_ascii=False)}: {to_json(x, indent + 1)}' for k, x in v.items()]
        return '{\n' + ',\n'.join(items) + '\n' + pad + '}'
    if isinstance(v, list):
        if not v:
            return '[]'
        items = [f'{pad}  {to_json(x, indent + 1)}' for x in v]
        return '[\n' + ',\n'.join(items) + '\n' + pad + ']'
    if v is None:
        return 'null'
    if v is True:
        return 'true'
    if v is False:
        return 'false'
    if isinstance(v, (int, float)):
        return fmt_number(v)
    return json.dumps(v, ensure_ascii=False)


# ---------------------------------------------------------------- tokenizer
_tok_rx = re.compile(r"""
  (?P<ws>\s+)
 |(?P<str>'(?:[^']|'')*')
 |(?P<num>0x[0-9a-fA-F]+|(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?)
 |(?P<id>[A-Za-z_][A-Za-z0-9_-]*)
 |(?P<op>==|!=|<=|>=|&&|\|\||[!<>()\[\].,*])
""", re.X)


def tokenize(s):
    pos, out = 0, []
    while pos < len(s):
        m = _tok_rx.match(s, pos)
        if not m:
            raise ExprError(f'bad token at {s[pos:pos+20]!r} in {s!r}')
        pos = m.end()
        k = m.lastgroup
        if k == 'ws':
            continue
        out.append((k, m.group()))
    out.append(('eof', None))
    return out


# ---------------------------------------------------------------- parser -> AST
class Parser:
    def __init__(self, s):
        self.toks = tokenize(s)
        self.i = 0
        self.src = s

    def peek(self, k=0):
        return self.toks[self.i + k]

    def take(self, val=None):
        t = self.toks[self.i]
        if val is not None and t[1] != val:
            raise ExprError(f'expected {val!r} got {t!r} in {self.src!r}')
        self.i += 1
        return t

    def parse(self):
        n = self.or_()
        if self.peek()[0] != 'eof':
            raise ExprError(f'trailing tokens {self.peek()!r} in {self.src!r}')
        return n

    def or_(self):
        n = self.and_()
        while self.peek()[1] == '||':
            self.take()
            n = ('or', n, self.and_())
        return n

    def and_(self):
        n = self.eq()
        while self.peek()[1] == '&&':
            self.take()
            n = ('and', n, self.eq())
        return n

    def eq(self):
        n = self.cmp()
        while self.peek()[1] in ('==', '!='):
            op = self.take()[1]
            n = (op, n, self.cmp())
        return n

    def cmp(self):
        n = self.unary()
        while self.peek()[1] in ('<', '<=', '>', '>='):
            op = self.take()[1]
            n = (op, n, self.unary())
        return n

    def unary(self):
        if self.peek()[1] == '!':
            self.take()
            return ('not', self.unary())
        return self.postfix()

    def postfix(self):
        n = self.primary()
        while True:
            t = self.peek()
            if t[1] == '.':
                self.take()
                nt = self.take()
                if nt[1] == '*':
                    n = ('star', n)
                elif nt[0] == 'id':
                    n = ('prop', n, nt[1])
                else:
                    raise ExprError(f'bad property {nt!r} in {self.src!r}')
            elif t[1] == '[':
                self.take()
                if self.peek()[1] == '*':
                    self.take()
                    self.take(']')
                    n = ('star', n)
                else:
                    idx = self.or_()
                    self.take(']')
                    n = ('index', n, idx)
            else:
                return n

    def primary(self):
        k, v = self.take()
        if k == 'str':
            return ('lit', v[1:-1].replace("''", "'"))
        if k == 'num':
            if v.startswith('0x'):
                return ('lit', int(v, 16))
            f = float(v)
            return ('lit', int(f) if re.match(r'^\d+$', v) else f)
        if k == 'op' and v == '(':
            n = self.or_()
            self.take(')')
            return n
        if k == 'op' and v == '-' :
            raise ExprError('unary minus unsupported')
        if k == 'id':
            low = v.lower()
            if low == 'null':
                return ('lit', None)
            if low == 'true':
                return ('lit', True)
            if low == 'false':
                return ('lit', False)
            if v == 'NaN':
                return ('lit', math.nan)
            if v == 'Infinity':
                return ('lit', math.inf)
            if self.peek()[1] == '(':
                self.take('(')
                args = []
                if self.peek()[1] != ')':
                    args.append(self.or_())
                    while self.peek()[1] == ',':
                        self.take()
                        args.append(self.or_())
                self.take(')')
                return ('call', low, args)
            return ('ctx', v)
        raise ExprError(f'unexpected token {v!r} in {self.src!r}')


# ---------------------------------------------------------------- evaluation
def get_prop(obj, name):
    if isinstance(obj, Placeholder):
        return obj.child(name)
    if isinstance(obj, dict):
        if name in obj:
            return obj[name]
        low = name.lower() if isinstance(name, str) else name
        for k, v in obj.items():
            if isinstance(k, str) and k.lower() == low:
                return v
        return None
    if isinstance(obj, list) and isinstance(name, (int, float)) and not isinstance(name, bool):
        i = int(name)
        return obj[i] if 0 <= i < len(obj) else None
    return None


class Star(list):
    """result of a .* filter"""


def evaluate(node, ctx):
    t = node[0]
    if t == 'lit':
        return node[1]
    if t == 'ctx':
        name = node[1]
        for k in ctx:
            if k.lower() == name.lower():
                return ctx[k]
        raise ExprError(f'unknown context {name}')
    if t == 'prop':
        base = evaluate(node[1], ctx)
        if isinstance(base, Star):
            return Star([get_prop(x, node[2]) for x in base if isinstance(x, dict)])
        return get_prop(base, node[2])
    if t == 'index':
        base = evaluate(node[1], ctx)
        idx = realize(evaluate(node[2], ctx))
        if isinstance(base, Placeholder):
            return base.child(to_str(idx))
        if isinstance(base, list):
            if isinstance(idx, str):
                return None
            return get_prop(base, to_num(idx))
        if isinstance(base, dict):
            return get_prop(base, to_str(idx))
        return None
    if t == 'star':
        base = evaluate(node[1], ctx)
        if isinstance(base, Placeholder):
            return Placeholder(base.path + '.*')
        if isinstance(base, list):
            return Star(base)
        if isinstance(base, dict):
            return Star(list(base.values()))
        return Star([])
    if t == 'not':
        return not truthy(evaluate(node[1], ctx))
    if t == 'and':
        a = evaluate(node[1], ctx)
        return evaluate(node[2], ctx) if truthy(a) else a
    if t == 'or':
        a = evaluate(node[1], ctx)
        return a if truthy(a) else evaluate(node[2], ctx)
    if t in ('==', '!='):
        r = loose_eq(evaluate(node[1], ctx), evaluate(node[2], ctx))
        return r if t == '==' else not r
    if t in ('<', '<=', '>', '>='):
        c = compare(evaluate(node[1], ctx), evaluate(node[2], ctx))
        if c is None:
            return False
        return {'<': c < 0, '<=': c <= 0, '>': c > 0, '>=': c >= 0}[t]
    if t == 'call':
        return call(node[1], [evaluate(a, ctx) for a in node[2]])
    raise ExprError(f'bad node {node!r}')


def call(name, args):
    args = [realize(a) for a in args]
    if name == 'format':
        fmt = to_str(args[0])
        out, i = [], 0
        while i < len(fmt):
            c = fmt[i]
            if c == '{' and fmt[i:i + 2] == '{{':
                out.append('{'); i += 2; continue
            if c == '}' and fmt[i:i + 2] == '}}':
                out.append('}'); i += 2; continue
            if c == '{':
                j = fmt.index('}', i)
                out.append(to_str(args[1 + int(fmt[i + 1:j])]))
                i = j + 1
                continue
            out.append(c); i += 1
        return ''.join(out)
    if name == 'tojson':
        return to_json(args[0])
    if name == 'fromjson':
        return json.loads(to_str(args[0]))
    if name == 'contains':
        hay, needle = args
        if isinstance(hay, list):
            return any(loose_eq(x, needle) for x in hay)
        return to_str(needle).casefold() in to_str(hay).casefold()
    if name == 'startswith':
        return to_str(args[0]).casefold().startswith(to_str(args[1]).casefold())
    if name == 'endswith':
        return to_str(args[0]).casefold().endswith(to_str(args[1]).casefold())
    if name == 'join':
        sep = to_str(args[1]) if len(args) > 1 else ','
        if isinstance(args[0], list):
            return sep.join(to_str(x) for x in args[0])
        return to_str(args[0])
    if name in ('always', 'success'):
        return True
    if name in ('failure', 'cancelled'):
        return False
    raise ExprError(f'unsupported function {name}')


# ---------------------------------------------------------------- templates
_tmpl_rx = re.compile(r'\$\{\{(.*?)\}\}', re.S)


def find_exprs(s):
    """Split a template string into [('lit', text) | ('expr', src)] honouring quotes."""
    parts, i = [], 0
    while True:
        j = s.find('${{', i)
        if j < 0:
            parts.append(('lit', s[i:]))
            break
        parts.append(('lit', s[i:j]))
        k, inq = j + 3, False
        while k < len(s):
            if s[k] == "'":
                inq = not inq
            elif not inq and s.startswith('}}', k):
                break
            k += 1
        else:
            raise ExprError(f'unterminated expression in {s!r}')
        parts.append(('expr', s[j + 3:k]))
        i = k + 2
    return [p for p in parts if not (p[0] == 'lit' and p[1] == '')]


def eval_expr(src, ctx):
    return evaluate(Parser(src.strip()).parse(), ctx)


def eval_value(v, ctx):
    """Evaluate a YAML value that may contain ${{ }}.  A value that is exactly one
    expression keeps the expression's type; otherwise the result is a string."""
    if not isinstance(v, str):
        return v
    parts = find_exprs(v)
    if len(parts) == 1 and parts[0][0] == 'expr':
        return realize(eval_expr(parts[0][1], ctx))
    if not any(p[0] == 'expr' for p in parts):
        return v
    return ''.join(p[1] if p[0] == 'lit' else to_str(eval_expr(p[1], ctx)) for p in parts)
