#!/usr/bin/env python3
"""The product's functions longer than a number of lines, longest first: the check of docs/ARCHITECTURE.md's
rule that no function in app/, analysis/, profiler/, collectors/, job/ or tools/ exceeds 150 lines.

    python3 tools/function_lengths.py [LINES]     (default 150; exits 1 when any function is longer)

A function is a brace block opened at namespace or class scope after a parameter list; strings, characters
and comments are blanked first. A heuristic, not a C++ parser: a macro that opens a block may fool it.
"""
import glob
import re
import sys
LIMIT = int(sys.argv[1]) if len(sys.argv) > 1 else 150
res=[]
files=[]
for d in ['app','analysis','profiler','collectors','job','tools']:
    files+=glob.glob(d+'/**/*.cpp',recursive=True)+glob.glob(d+'/**/*.hpp',recursive=True)
for f in files:
    text=open(f).read()
    # strip strings/chars/comments crudely
    text=re.sub(r'//[^\n]*','',text)
    text=re.sub(r'/\*.*?\*/','',text,flags=re.S)
    text=re.sub(r"'(\\.|[^'\\])'","' '",text)
    text=re.sub(r'R"\((.*?)\)"','""',text,flags=re.S)
    text=re.sub(r'"(\\.|[^"\\\n])*"','""',text)
    lines=text.split('\n')
    stack=[]  # (kind,start_line,header)
    header_buf=''
    for i,l in enumerate(lines):
        for ch_i,ch in enumerate(l):
            if ch=='{':
                hdr=(header_buf+l[:ch_i]).strip()
                outer_ok = all(k=='ns' for k,_,_ in stack)
                if re.search(r'\bnamespace\b',hdr.split(';')[-1]) or hdr.endswith('extern "C"') : kind='ns'
                elif outer_ok and re.search(r'\)\s*(const)?\s*(noexcept)?\s*(override)?\s*(->\s*[\w:<>]+)?\s*$|\)\s*:\s*.*$',hdr.split(';')[-1].split('}')[-1]) and not re.search(r'\b(struct|class|enum|union)\b',hdr.split(';')[-1].split('}')[-1]):
                    kind='fn'
                elif outer_ok and re.search(r'\b(struct|class)\b',hdr.split(';')[-1].split('}')[-1]): kind='cls'
                else: kind='blk'
                if kind=='cls': kind='ns'  # treat member functions of classes as functions
                stack.append((kind,i,hdr.split(';')[-1].split('}')[-1][-80:]))
                header_buf=''
            elif ch=='}':
                if stack:
                    k,a,h=stack.pop()
                    if k=='fn' and i-a+1>LIMIT: res.append((i-a+1,f,a+1,h))
                header_buf=''
            elif ch==';':
                header_buf=''
        header_buf+=l+' ' if not l.strip().endswith(';') else ''
        if len(header_buf)>400: header_buf=header_buf[-400:]
res.sort(reverse=True)
for r in res:
    print(*r)
print(f"{len(res)} function(s) over {LIMIT} lines")
sys.exit(1 if res else 0)
