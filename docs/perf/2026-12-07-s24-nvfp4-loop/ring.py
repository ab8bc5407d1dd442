"""Writes the bare loop of the binary16 ring kernel that session 24 tried for the AVX2 NVFP4 `F32`
GEMV (see README.md): four chunks an iteration, each decoding the chunk `D` ahead into its slot of
a four-slot ring (two table shuffles, two shifts and two ANDs a half chunk, four 32-byte stores)
and converting its own slot with `vcvtph2ps` from memory, two FMA chains a half chunk, two lane
scale permutes and two accumulator FMAs; every other memory operand its own 64-byte slot of an
L1-resident buffer. Usage: ring.py D out.S"""
import sys
D=int(sys.argv[1]); out=sys.argv[2]
head='''.text
.globl q5loop
q5loop:
 push %r12
 push %r13
 lea 0x1000(%rdi),%r13
 lea 0x3000(%rdi),%r12
 vxorps %ymm0,%ymm0,%ymm0
 vpxor %ymm12,%ymm12,%ymm12
1:
'''
tail=''' dec %rsi
 jnz 1b
 pop %r13
 pop %r12
 vzeroupper
 ret
'''
def chunk(k):
    # The scale decode of the byte-move kernel (F16C route), then two half chunks.
    o = ['vpunpcklbw %xmm0,%xmm0,%xmm0', 'vpsraw $0x1,%xmm0,%xmm0', 'vpand  0x0(%r13),%xmm0,%xmm0',
         'vcvtph2ps %xmm0,%ymm0', 'vbroadcastss 0x40(%r13),%ymm1', 'vmulps %ymm1,%ymm0,%ymm3']
    st = 0x200 * ((k + D) % 4)
    ld = 0x200 * k
    for h in range(2):
        cb = 0x80 + 0x40 * h * 20
        # Decode stage: the chunk D ahead into its slot (words W0..W3 of this half).
        o += [f'vmovdqu {hex(cb)}(%r13),%ymm1', 'vpsrlw $0x4,%ymm1,%ymm2', 'vpand %ymm1,%ymm10,%ymm1',
              'vpand %ymm2,%ymm10,%ymm2', 'vpshufb %ymm1,%ymm11,%ymm1', 'vpshufb %ymm2,%ymm11,%ymm2']
        o += ['vpsllw $8,%ymm1,%ymm4', 'vpand %ymm1,%ymm13,%ymm5', 'vpsllw $8,%ymm2,%ymm6',
              'vpand %ymm2,%ymm13,%ymm7']
        for i, r in enumerate([4, 5, 6, 7]):
            o.append(f'vmovdqa %ymm{r},{hex(st + 0x100 * h + 32 * i)}(%r12)')
        # Compute stage: this chunk's slot; vector m = 2 q + L feeds chain L.
        for m in range(8):
            t = 4 if m % 2 == 0 else 5
            o.append(f'vcvtph2ps {hex(ld + 0x100 * h + 16 * m)}(%r12),%ymm{t}')
            xo = cb + 0x40 * (1 + m)
            acc = 'ymm1' if m % 2 == 0 else 'ymm2'
            op = 'vmulps' if m < 2 else 'vfmadd231ps'
            o.append(f'{op} {hex(xo)}(%r13),%ymm{t},%{acc}')
        o += ['vpermps %ymm3,%ymm9,%ymm6', 'vfmadd231ps %ymm6,%ymm1,%ymm8',
              'vpermps %ymm3,%ymm15,%ymm6', 'vfmadd231ps %ymm6,%ymm2,%ymm14']
    o.append('vmovq  %rbx,%xmm0')
    return o


body=[]
for k in range(4): body+=chunk(k)
open(out,'w').write(head+'\n'.join('    '+x for x in body)+'\n'+tail)
