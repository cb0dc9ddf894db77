#!/usr/bin/python3
"""bootstrap_ref.py - an independent Python implementation of execeval's
bootstrap (src/results/bootstrap.h): splitmix64, xoshiro256**, the rejection draw,
the percentile interval. Prints the numbers pinned in test_bootstrap.c:

    /usr/bin/python3 tests/unit/bootstrap_ref.py
"""
M=(1<<64)-1
def splitmix(state):
    state=(state+0x9e3779b97f4a7c15)&M
    z=state
    z=((z^(z>>30))*0xbf58476d1ce4e5b9)&M
    z=((z^(z>>27))*0x94d049bb133111eb)&M
    return state, z^(z>>31)
class Rng:
    def __init__(self,seed):
        self.s=[]
        st=seed
        for i in range(4):
            st,z=splitmix(st); self.s.append(z)
    def next(self):
        s=self.s
        rotl=lambda x,k: ((x<<k)|(x>>(64-k)))&M
        r=(rotl((s[1]*5)&M,7)*9)&M
        t=(s[1]<<17)&M
        s[2]^=s[0]; s[3]^=s[1]; s[1]^=s[2]; s[0]^=s[3]; s[2]^=t; s[3]=rotl(s[3],45)
        return r
    def below(self,n):
        th=(2**64-n)%n
        while True:
            x=self.next()
            if x>=th: return x%n
from math import comb
def pak(n,c,k):
    if n-c<k: return 1.0
    return 1-comb(n-c,k)/comb(n,k)
def quant(v,q):
    v=sorted(v); h=(len(v)-1)*q; lo=int(h); hi=min(lo+1,len(v)-1)
    return v[lo]+(v[hi]-v[lo])*(h-lo)
def boot(vals, seed, R=1000, level=0.95):
    n=len(vals[0]); rng=Rng(seed); means=[[] for _ in vals]
    for r in range(R):
        sums=[0.0]*len(vals)
        for i in range(n):
            p=rng.below(n)
            for j in range(len(vals)): sums[j]+=vals[j][p]
        for j in range(len(vals)): means[j].append(sums[j]/n)
    t=(1-level)/2
    return [(quant(m,t),quant(m,1-t)) for m in means]
if __name__=="__main__":
    st=1234567
    out=[]
    for i in range(5):
        st,z=splitmix(st); out.append(z)
    print("splitmix 1234567:", out)
    r=Rng(0); print("xoshiro seed 0:", [hex(r.next()) for _ in range(4)])
    r=Rng(20240229); print("xoshiro seed 20240229:", [hex(r.next()) for _ in range(4)])
    # data set: tasks id -> (n, c, scores)
    tasks={"a":(5,2),"b":(4,0),"c":(6,3),"d":(3,3),"e":(10,1),"f":(4,1)}
    ids=sorted(tasks)
    vals=[[pak(*tasks[i],1) for i in ids],[pak(*tasks[i],2) for i in ids],
          [(tasks[i][1]+0.25*(tasks[i][0]-tasks[i][1]))/tasks[i][0] for i in ids]]
    print("points", [sum(v)/len(v) for v in vals])
    for (lo,hi) in boot(vals, 20240229): print(repr(lo), repr(hi))
