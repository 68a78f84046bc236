#!/usr/bin/env python3
"""Checks the DOT text `cxla graph` writes and prints it in a form tests can grep.

usage: check_dot.py FILE.dot

Parses the subset of the DOT language cxla writes (a digraph of node statements, edge
statements, attribute statements and nested subgraphs) with a tokenizer that follows
Graphviz's rules for quoted strings, and fails (exit 1, message on stderr) on anything
malformed: an unterminated string, unbalanced braces or brackets, an escape other than
\\" \\\\ \\n in a label, a node declared twice, an edge naming a node not declared
before it, an lhead naming a cluster that does not hold the edge's head, a non-ASCII
byte. On success it prints one line per fact, naming nodes by their labels' first line
(without "ROOT "):

  node LINE1 | LINE2 | LINE3 ...     (the label's lines; "ROOT name" for the root)
  edge FROM -> TO [LABEL]
  call FROM -> CLUSTER-LABEL [LABEL]
  control FROM -> TO
  cluster LABEL in PARENT-LABEL      (PARENT-LABEL is "-" at the top)
  member NAME in CLUSTER-LABEL
"""
import re
import sys


class DotError(Exception):
    pass


def tokenize(text):
    tokens = []
    i, n = 0, len(text)
    ident = re.compile(r"[A-Za-z_][A-Za-z0-9_]*|-?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)")
    while i < n:
        c = text[i]
        if c.isspace():
            i += 1
        elif c == '"':
            j, out = i + 1, []
            while True:
                if j >= n:
                    raise DotError("unterminated string starting at offset %d" % i)
                if text[j] == "\\":
                    if j + 1 >= n:
                        raise DotError("backslash at the end of the text")
                    esc = text[j + 1]
                    if esc not in '"\\n':
                        raise DotError("unexpected escape \\%s at offset %d" % (esc, j))
                    out.append("\n" if esc == "n" else esc)
                    j += 2
                elif text[j] == '"':
                    break
                elif text[j] == "\n":
                    raise DotError("raw newline inside a string at offset %d" % j)
                else:
                    out.append(text[j])
                    j += 1
            tokens.append(("str", "".join(out)))
            i = j + 1
        elif text.startswith("->", i):
            tokens.append(("op", "->"))
            i += 2
        elif c in "{}[];,=":
            tokens.append(("op", c))
            i += 1
        else:
            m = ident.match(text, i)
            if not m:
                raise DotError("unexpected character %r at offset %d" % (c, i))
            tokens.append(("id", m.group()))
            i = m.end()
    return tokens


class Parser:
    def __init__(self, tokens):
        self.t = tokens
        self.i = 0
        self.nodes = {}  # id -> label
        self.node_cluster = {}  # id -> cluster id or None
        self.clusters = {}  # cluster id -> (label, parent cluster id)
        self.edges = []  # (from, to, attrs)

    def peek(self, k=0):
        return self.t[self.i + k] if self.i + k < len(self.t) else (None, None)

    def take(self, kind=None, value=None):
        tok = self.peek()
        if tok[0] is None:
            raise DotError("unexpected end of the text")
        if (kind and tok[0] != kind and not (kind == "id" and tok[0] == "str")) or (
            value and tok[1] != value
        ):
            raise DotError("expected %s, got %r (token %d)" % (value or kind, tok[1], self.i))
        self.i += 1
        return tok[1]

    def attrs(self):
        out = {}
        while self.peek() == ("op", "["):
            self.take()
            while self.peek() != ("op", "]"):
                key = self.take("id")
                self.take("op", "=")
                out[key] = self.take("id")
                if self.peek() in (("op", ","), ("op", ";")):
                    self.take()
            self.take("op", "]")
        return out

    def graph(self):
        if self.take("id") != "digraph":
            raise DotError("the text does not start with 'digraph'")
        if self.peek() != ("op", "{"):
            self.take("id")
        self.take("op", "{")
        self.stmts(None)
        self.take("op", "}")
        if self.peek()[0] is not None:
            raise DotError("text after the closing brace")

    def stmts(self, cluster):
        while self.peek() != ("op", "}"):
            if self.peek()[0] is None:
                raise DotError("unbalanced braces: the text ends inside a graph")
            self.stmt(cluster)
            if self.peek() == ("op", ";"):
                self.take()

    def stmt(self, cluster):
        kind, value = self.peek()
        if kind == "id" and value in ("graph", "node", "edge") and self.peek(1) == ("op", "["):
            self.take()
            self.attrs()
            return
        if kind == "id" and value == "subgraph":
            self.take()
            name = self.take("id")
            if name in self.clusters:
                raise DotError("subgraph %s drawn twice" % name)
            self.clusters[name] = [None, cluster]
            self.take("op", "{")
            self.stmts(name)
            self.take("op", "}")
            return
        first = self.take("id")
        if self.peek() == ("op", "="):
            self.take()
            val = self.take("id")
            if cluster and first == "label":
                self.clusters[cluster][0] = val
            return
        chain = [first]
        while self.peek() == ("op", "->"):
            self.take()
            chain.append(self.take("id"))
        a = self.attrs()
        if len(chain) == 1:
            if first in self.nodes:
                raise DotError("node %s declared twice" % first)
            if "label" not in a:
                raise DotError("node %s has no label" % first)
            self.nodes[first] = a["label"]
            self.node_cluster[first] = cluster
        else:
            for x in chain:
                if x not in self.nodes:
                    raise DotError("edge names %s before it is declared" % x)
            for f, t in zip(chain, chain[1:]):
                self.edges.append((f, t, a))


def main():
    text = open(sys.argv[1], "rb").read()
    bad = [i for i, b in enumerate(text) if b >= 0x80 or (b < 0x20 and b not in b"\n\t")]
    if bad:
        raise DotError("byte %d is not printable ASCII" % bad[0])
    p = Parser(tokenize(text.decode("ascii")))
    p.graph()

    def name(node):
        first = p.nodes[node].split("\n")[0]
        return first[5:] if first.startswith("ROOT ") else first

    def clabel(c):
        return "-" if c is None else p.clusters[c][0]

    def inside(node, cluster):
        c = p.node_cluster[node]
        while c is not None:
            if c == cluster:
                return True
            c = p.clusters[c][1]
        return False

    out = []
    for n, label in p.nodes.items():
        out.append("node " + " | ".join(label.split("\n")))
        if p.node_cluster[n] is not None:
            out.append("member %s in %s" % (name(n), clabel(p.node_cluster[n])))
    for c, (label, parent) in p.clusters.items():
        if not c.startswith("cluster"):
            raise DotError("subgraph %s is not a cluster" % c)
        if label is None:
            raise DotError("cluster %s has no label" % c)
        out.append("cluster %s in %s" % (label, clabel(parent)))
    for f, t, a in p.edges:
        lab = " [%s]" % a["label"] if "label" in a else ""
        if "lhead" in a:
            c = a["lhead"]
            if c not in p.clusters or not inside(t, c):
                raise DotError("lhead %s does not hold %s" % (c, t))
            if inside(f, c):
                raise DotError("edge %s -> %s starts inside its lhead %s" % (f, t, c))
            out.append("call %s -> %s%s" % (name(f), clabel(c), lab))
        elif a.get("style") == "dotted":
            out.append("control %s -> %s" % (name(f), name(t)))
        else:
            out.append("edge %s -> %s%s" % (name(f), name(t), lab))
    sys.stdout.write("\n".join(out) + "\n")


if __name__ == "__main__":
    try:
        main()
    except DotError as e:
        sys.stderr.write("invalid DOT: %s\n" % e)
        sys.exit(1)
