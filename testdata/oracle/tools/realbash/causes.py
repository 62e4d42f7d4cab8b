import gzip,json,glob,collections,sys,os
sys.path.insert(0,'/tmp/rb/lib')
from assemble import classify
c=collections.Counter(); ex={}; n=0; nf=collections.Counter()
pat=sys.argv[1] if len(sys.argv)>1 else '*'
for f in sorted(glob.glob(f'/tmp/rb/work/{pat}/*.gz')):
    pr=f.split('/')[4]
    for l in gzip.open(f,'rt'):
        r=json.loads(l); n+=1
        k=os.path.basename(f).rsplit('.',3)[0]
        for x in r.get('not_found',[]): nf[x.split(':')[-2].strip() if x.count(':')>=2 else x]+=1
        if r['exit']!=0 or r['timed_out']:
            cl=classify(r); c[cl]+=1; ex.setdefault(cl,[]).append(f'{pr}:{k}')
print(n, sum(c.values()))
for k,v in c.most_common(): print(v,k, sorted(set(ex[k]))[:5])
print('NOT FOUND:', nf.most_common(20))
