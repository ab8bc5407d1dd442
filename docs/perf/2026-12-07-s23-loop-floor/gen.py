"""Turns a loop listing copied from `perf annotate --stdio --no-source` (addresses and percentages
stripped, one instruction a line) into a bare assembly loop `q5loop(buffer, iterations)`: branches
and compares are dropped, scalar bookkeeping becomes `add $1, %r10` (or is dropped, with the
prefetches, given `noscalar`), and every distinct memory operand gets its own 64-byte slot in the
buffer, so that all loads hit L1 and no store aliases another operand."""
import re,sys
src=sys.argv[1]; out=sys.argv[2]; drop_scalar=len(sys.argv)>3 and sys.argv[3]=='noscalar'
lines=open(src).read().strip().split('\n')
memmap={}
def mem(m):
    k=m.group(0)
    if k not in memmap: memmap[k]=0x40*len(memmap)
    return '0x%x(%%r13)'%memmap[k]
body=[]
for l in lines:
    l=re.sub(r'\s*#.*$','',l).strip()
    op=l.split()[0]
    if op.startswith('j') or op in ('cmp','cmpq','test'): continue
    if op in ('mov','lea','add','sub','inc','shl','imul','or','xor','and','nopw','nopl','cmovb','cmovae','movabs','data16'):
        if not drop_scalar: body.append('add $1, %r10')
        continue
    if op.startswith('prefetch') and drop_scalar: continue
    l=re.sub(r'-?(0x[0-9a-f]+)?\(%[a-z0-9]+(,%[a-z0-9]+,\d)?\)',mem,l)
    body.append(l)
open(out,'w').write(""".text
.globl q5loop
q5loop:
 push %r12
 push %r13
 lea 0x1000(%rdi),%r13
 vxorps %ymm0,%ymm0,%ymm0
1:
"""+'\n'.join('    '+x for x in body)+"""
 dec %rsi
 jnz 1b
 pop %r13
 pop %r12
 vzeroupper
 ret
""")
print(len(body),'instrs', len(memmap),'mem operands', file=sys.stderr)
