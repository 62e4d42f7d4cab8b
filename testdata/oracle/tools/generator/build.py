#!/usr/bin/env python3
"""Assemble /tmp/gen/points.tsv from out/<idx>_<sha7>/perkey.json."""
import json, os, sys, collections
SAMPLE = int(os.environ.get("SAMPLE_KEYS", "0"))  # 0 = all keys
revs = [l.rstrip("\n").split("\t") for l in open("/tmp/gen/revisions.tsv")]
HDR = ["pr","sha","key","scenario","isl","osl","tp","ep","dp_attn","conc","spec",
       "kv_offloading","kv_backend","max_model_len","exp_name","runner"]
def s(v):
    if v is None: return ""
    if isinstance(v, bool): return "true" if v else "false"
    return str(v)
rows = []; stats = []
for idx, sha, pr, mon, why, subj in revs:
    d = f"/tmp/gen/out/{int(idx):04d}_{sha[:7]}"
    chk = json.load(open(d + "/check.json"))
    if chk["full_rc"] != 0:
        stats.append((idx, sha, pr, mon, why, "FAILED", 0, 0, 0, 0)); continue
    assert chk["equal"], d
    perkey = json.load(open(d + "/perkey.json"))
    keys = sorted(k for k, v in perkey.items() if isinstance(v, list) and any("prefill" not in e and "decode" not in e for e in v))
    if SAMPLE: keys = keys[:SAMPLE]
    n = 0; skipped_mn = 0
    for k in sorted(perkey):
        v = perkey[k]
        skipped_mn += sum(1 for e in v if "prefill" in e or "decode" in e)
    for k in keys:
        for e in perkey[k]:
            if "prefill" in e or "decode" in e: continue
            scen = e.get("scenario-type", "fixed-seq-len")
            if "kv-offloading" in e: kvo = e["kv-offloading"]
            elif "offloading" in e: kvo = e["offloading"]
            else: kvo = None
            b = e.get("kv-offload-backend")
            if isinstance(b, dict): b = b.get("name")
            rows.append((int(pr), int(idx), [pr, sha, k, scen, s(e.get("isl")), s(e.get("osl")), s(e["tp"]), s(e.get("ep")),
                         s(e.get("dp-attn")), s(e["conc"]), s(e.get("spec-decoding", "none")), s(kvo), s(b),
                         s(e.get("max-model-len")), s(e.get("exp-name")), s(e.get("runner"))]))
            n += 1
    stats.append((idx, sha, pr, mon, why, "ok", len(keys), n, skipped_mn, chk["full_n"]))
def numkey(c):
    return tuple((0, int(x), "") if x.lstrip("-").isdigit() else (1, 0, x) for x in c)
rows.sort(key=lambda r: (r[0], r[2][2], numkey(r[2][3:])))
with open("/tmp/gen/points.tsv", "w") as f:
    f.write("\t".join(HDR) + "\n")
    for r in rows: f.write("\t".join(r[2]) + "\n")
with open("/tmp/gen/rowcounts.tsv", "w") as f:
    f.write("hist_idx\tsha\tpr\tmonth\twhy\tstatus\tkeys_recorded\trows\tmultinode_entries_dropped\tgenerator_entries_total\n")
    for st in stats: f.write("\t".join(map(str, st)) + "\n")
print(len(rows), os.path.getsize("/tmp/gen/points.tsv"))
