#!/bin/bash
# Per-platform CPU of diff/verify: fabconf (the whole command) and the lab (all lab processes), one group at a time.
# The lead's script (issue 42), run from a worktree: REPO (the checkout whose .venv runs fabconf, default: this
# one), S (the lab's state dir), T (scratch), GROUPS_ and STEPS as before. The lab must be up on S.
set -u
REPO=${REPO:-$(cd "$(dirname "$0")/.." && pwd)}
cd "$REPO" || exit 1
. .venv/bin/activate
S=${S:-/tmp/pp/state}
T=${T:-/tmp/pp}
mkdir -p "$T"
labcpu() { local t=0; local d; d=$(pgrep -f "fabconf_lab.daemon.*$S" | head -1); for p in $d $(ps -e -o pid=,ppid= | awk -v d=$d '$2==d{print $1}'); do read -r -a f < <(cut -d')' -f2- /proc/$p/stat 2>/dev/null) || continue; t=$((t+f[11]+f[12])); done; echo $t; }
for step in ${STEPS:-diff verify}; do
for g in ${GROUPS_:-sn5600 dcs-7060x5 n9k-9364d gpu_hosts}; do
  n=$(python -c "import yaml;h=yaml.safe_load(open('$S/inventory/hosts.yaml'));print(sum('$g' in v.get('groups',[]) for v in h.values()))")
  l0=$(labcpu)
  /usr/bin/time -f "%U %S %e" -o "$T/t" fabconf $step -i $S/inventory -l "$g" --processes 1 --workers 50 --host-workers 50 --format json > "$T/out.json" 2>"$T/err"
  rc=$?
  l1=$(labcpu)
  read u s e < <(tail -1 "$T/t")
  python - "$step" "$g" "$n" "$u" "$s" "$e" "$l0" "$l1" "$rc" "$T/out.json" <<'P'
import sys,json,os
step,g,n,u,s,e,l0,l1,rc,out=sys.argv[1:]
n=int(n);tck=os.sysconf("SC_CLK_TCK")
lab=(int(l1)-int(l0))/tck
try:
    d=json.load(open(out)); st={}
    for x in (d.get('devices') or d.get('results') or []):
        k=x.get('state'); st[k]=st.get(k,0)+1
except Exception as ex: st=str(ex)
print(f"{step:6} {g:11} n={n:4} wall {float(e):6.1f}s fabconf {1000*(float(u)+float(s))/n:6.1f} ms/dev (u {u} s {s}) lab {1000*lab/n:6.1f} ms/dev rc={rc} {st}",flush=True)
P
done; done
