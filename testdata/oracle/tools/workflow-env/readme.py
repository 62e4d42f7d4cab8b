import json, hashlib, collections
report = json.load(open('/tmp/wfo/report.json'))
insrc = json.load(open('/tmp/wfo/inputsrc.json'))
head_txt = open('/tmp/wfo/lib/README.head.md').read()
out = [head_txt]
out.append('\n## Per-revision details\n')
out.append('For every revision: why it was chosen, the template and caller job(s) used, the exact generator command '
           '(run with the working directory at a checkout of that commit; `--config-files` = every `*-master.yaml` in the '
           'revision\'s config dir, alphabetical), the points chosen (index in generator output order, config key, '
           'caller job, and why chosen), and notes.\n')
prev_pre = None
for r in report:
    out.append(f"### PR #{r['pr']} — `{r['short']}` ({r['date']})\n")
    out.append(f"*{r['subject']}*  \nSelected because: {r['why']}.\n")
    out.append(f"- template: `{r['template']}`, step `{r['launch_step']}`")
    jobs_used = collections.OrderedDict()
    for p in r['points']:
        jobs_used.setdefault((p['caller'], p['job']), 0)
        jobs_used[(p['caller'], p['job'])] += 1
    out.append('- caller job(s) used: ' + ', '.join(f"`{c}` → `{j}` ({n} pts)" for (c, j), n in jobs_used.items()))
    allj = '; '.join(f"`{c}`: " + ', '.join(js) for c, js in r['callers'].items())
    out.append(f"- single-node (benchmark-tmpl) jobs present in the caller(s): {allj}")
    out.append(f"- generator: `{r['gen_cmd']}` → {r.get('n_points')} points, "
               f"{r.get('n_excluded_multinode_shape')} with multi-node shape (prefill/decode) dropped")
    pre = r.get('pre_script', '')
    if pre != prev_pre:
        if pre.strip():
            out.append('- run-script lines before `' + r.get('launch_line', '') + '` (executed with `bash --noprofile --norc -eo pipefail`):\n\n```bash\n' + pre.rstrip() + '\n```')
        else:
            out.append('- run script: the launcher line `' + r.get('launch_line', '') + '` is the first line (nothing exported before it)')
        prev_pre = pre
    else:
        out.append('- run-script prefix: unchanged from the previous revision')
    out.append('- points:')
    for p in r['points']:
        pt = p['point']
        desc = f"{pt.get('scenario-type', 'fixed-seq-len')}"
        if pt.get('scenario-type') != 'agentic-coding':
            desc += f" {pt.get('isl')}/{pt.get('osl')}"
        desc += f" tp{pt.get('tp')} ep{pt.get('ep')} dpa={str(pt.get('dp-attn')).lower()} conc{pt.get('conc')} runner={pt.get('runner')}"
        out.append(f"  - #{p['index']} `{p['key']}` via `{p['job']}` — {desc} — chosen for: {', '.join(p['reasons'])}"
                   + (f" — NOTE: {'; '.join(sorted(set(p['notes'])))}" if p['notes'] else ''))
    for n in r['notes']:
        out.append(f"- note: {n}")
    key = f"{r['pr']} {r['short']}"
    if key in insrc:
        for job, d in insrc[key].items():
            if d:
                out.append(f"- env from inputs NOT passed by `{job}` (input default / type default used): " +
                           ', '.join(f"{v} ({'; '.join(s)})" for v, s in sorted(d.items())))
    out.append('')
# informational recipe fingerprints
out.append('\n## Informational: RECIPE_FINGERPRINT in a real dispatch (#2613 and later)\n')
out.append('The TSV follows the brief: the matrix entry is the generator\'s JSON point, which carries no `recipe-fingerprint`, '
           'so `RECIPE_FINGERPRINT` is empty and `RESULT_FILENAME` == `RESULT_FILENAME_BASE`. In the real workflow the point '
           'goes through `utils/process_changelog.py`, which (from #2613) adds `recipe-fingerprint` = sha256 of the canonical '
           'JSON of the entry without `conc`/`exp-name`. If the entry were exactly the generator point, the launcher would see '
           '`RECIPE_FINGERPRINT=<64 hex>` and `RESULT_FILENAME=<RESULT_FILENAME_BASE>_recipe-<first 16 hex>`; first 16 hex per point:\n')
out.append('| pr | key | conc | fingerprint[:16] |\n|---|---|---|---|')
for r in report:
    if r['pr'] not in ('2613', '2707'):
        continue
    for p in r['points']:
        rec = {k: v for k, v in p['point'].items() if k not in ('conc', 'exp-name', 'recipe-fingerprint')}
        fp = hashlib.sha256(json.dumps(rec, sort_keys=True, separators=(',', ':'), ensure_ascii=True).encode()).hexdigest()
        out.append(f"| {r['pr']} | {p['key']} | {p['point'].get('conc')} | {fp[:16]} |")
out.append('\n(process_changelog runs `test-config` rather than `full-sweep` and may mark eval rows, so the real entry can differ; '
           'these hashes are indicative only and are NOT in the TSV.)\n')
open('/tmp/wfo/README.md', 'w').write('\n'.join(out) + '\n')
print('ok')
