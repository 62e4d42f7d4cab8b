"""YAML loader approximating GitHub's workflow parser (YAML 1.2 core schema):
only true/false (any case variant listed by the 1.2 core schema) are booleans,
'on'/'yes'/'no'/'off' stay strings."""
import re
import yaml

class GHLoader(yaml.SafeLoader):
    pass

# drop YAML 1.1 bool resolver and add YAML 1.2 core bools
for ch, resolvers in list(GHLoader.yaml_implicit_resolvers.items()):
    GHLoader.yaml_implicit_resolvers[ch] = [
        (tag, rx) for tag, rx in resolvers if tag != 'tag:yaml.org,2002:bool']
GHLoader.yaml_implicit_resolvers = {k: v for k, v in GHLoader.yaml_implicit_resolvers.items()}
_boolrx = re.compile(r'^(?:true|True|TRUE|false|False|FALSE)$')
for ch in 'tTfF':
    GHLoader.yaml_implicit_resolvers.setdefault(ch, [])
    GHLoader.yaml_implicit_resolvers[ch] = list(GHLoader.yaml_implicit_resolvers[ch]) + [('tag:yaml.org,2002:bool', _boolrx)]

def _bool(loader, node):
    return loader.construct_scalar(node).lower() == 'true'
GHLoader.add_constructor('tag:yaml.org,2002:bool', _bool)

def load(text):
    return yaml.load(text, Loader=GHLoader)

# YAML 1.2 core ints (no 1.1 octal '010', no underscores, no sexagesimal)
for ch, resolvers in list(GHLoader.yaml_implicit_resolvers.items()):
    GHLoader.yaml_implicit_resolvers[ch] = [
        (tag, rx) for tag, rx in resolvers if tag != 'tag:yaml.org,2002:int']
_intrx = re.compile(r'^(?:[-+]?[0-9]+|0o[0-7]+|0x[0-9a-fA-F]+)$')
for ch in '-+0123456789':
    GHLoader.yaml_implicit_resolvers.setdefault(ch, [])
    GHLoader.yaml_implicit_resolvers[ch] = list(GHLoader.yaml_implicit_resolvers[ch]) + [('tag:yaml.org,2002:int', _intrx)]
def _int(loader, node):
    s = loader.construct_scalar(node)
    if s.startswith('0o'): return int(s[2:], 8)
    if s.startswith('0x'): return int(s[2:], 16)
    return int(s)
GHLoader.add_constructor('tag:yaml.org,2002:int', _int)
