#!/bin/bash
# per-platform CPU of diff/verify: fabconf (whole command) and lab (all lab processes), one group at a time
# (the lead's script for issue 42; S: the lab's state dir, T: a scratch dir, GROUPS_ and STEPS: what to run)
set -u; export T=${T:-/tmp/pp}; mkdir -p "$T"
cd "${REPO:-$(dirname "$0")/..}"; . .venv/bin/activate  # OLD=DIR: run the code of DIR (a worktree of the base) instead
[ -n "${OLD:-}" ] && export PYTHONPATH=$OLD
S=${S:-$T/state}
labcpu() { local t=0; local d; d=$(pgrep -f "fabconf_lab.daemon.*$S" | head -1); for p in $d $(ps -e -o pid=,ppid= | awk -v d=$d '$2==d{print $1}'); do read -r -a f < <(cut -d')' -f2- /proc/$p/stat 2>/dev/null) || continue; t=$((t+f[11]+f[12])); done; echo $t; }
for step in ${STEPS:-diff verify}; do
for g in ${GROUPS_:-sn5600 dcs-7060x5 n9k-9364d gpu_hosts}; do
  n=$(python -c "import yaml;h=yaml.safe_load(open('$S/inventory/hosts.yaml'));print(sum('$g' in v.get('groups',[]) for v in h.values()))")
  l0=$(labcpu)
  /usr/bin/time -f "%U %S %e" -o $T/t fabconf $step -i $S/inventory -l "$g" --processes 1 --workers 50 --host-workers 50 --format json > $T/out.json 2>$T/err
  rc=$?
  l1=$(labcpu)
  read u s e < <(tail -1 $T/t)
  python - "$step" "$g" "$n" "$u" "$s" "$e" "$l0" "$l1" "$rc" <<'P'
import sys,json,os
step,g,n,u,s,e,l0,l1,rc=sys.argv[1:]
n=int(n);tck=os.sysconf("SC_CLK_TCK")
lab=(int(l1)-int(l0))/tck
try:
    d=json.load(open(os.environ['T']+'/out.json')); st={}
    for x in (d.get('devices') or d.get('results') or []):
        k=x.get('state'); st[k]=st.get(k,0)+1
except Exception as ex: st=str(ex)
print(f"{step:6} {g:11} n={n:4} wall {float(e):6.1f}s fabconf {1000*(float(u)+float(s))/n:6.1f} ms/dev (u {u} s {s}) lab {1000*lab/n:6.1f} ms/dev rc={rc} {st}",flush=True)
P
done; done
