#!/bin/bash
# PID 1 of a fresh pid+mount namespace: a private root on tmpfs, then the launch step under
# chroot with exactly the point's environment.  args: slotdir treedir stubsdir cstubsdir
set -e
S=$1 TREE=$2 STUBS=$3 CSTUBS=$4
R=$S/root
mount -t tmpfs -o size=8g,mode=755 mnrbroot "$R"
mkdir -p "$R"/{usr,etc,dev,sys,proc,tmp,var/tmp,root,home/runner,run,mnt} "$R"/.rb/{stubs,cstubs,rec,state,id,uup,uwk}
ln -s usr/bin "$R/bin"; ln -s usr/lib "$R/lib"; ln -s usr/lib64 "$R/lib64"; ln -s usr/sbin "$R/sbin"
# /usr: the host's, under a private writable overlay (container bind targets like /usr/sbin/nicctl)
mount -t overlay mnrbusr -o "lowerdir=/usr,upperdir=$R/.rb/uup,workdir=$R/.rb/uwk" "$R/usr"
mount --rbind /etc "$R/etc"
: > "$S/profile"; mount --bind "$S/profile" "$R/etc/profile"      # login shells: an empty /etc/profile
mount --rbind /dev "$R/dev"; mount -t tmpfs -o size=64g,mode=1777 mnrbshm "$R/dev/shm"
mount --rbind /sys "$R/sys"
mount -t proc proc "$R/proc"
chmod 1777 "$R/tmp" "$R/var/tmp"
mount --bind "$STUBS" "$R/.rb/stubs"
mount --bind "$CSTUBS" "$R/.rb/cstubs"
mount --bind "$S/rec" "$R/.rb/rec"
cp -a "$S/id/." "$R/.rb/id/"
WS=$(cat "$S/workspace")
mapfile -t PRE < "$S/precreate"
[ ${#PRE[@]} -gt 0 ] && mkdir -p "${PRE[@]/#/$R}"
mkdir -p "$R$WS" "$R/.rb/wup" "$R/.rb/wwk"
mount -t overlay mnrbws -o "lowerdir=$TREE,upperdir=$R/.rb/wup,workdir=$R/.rb/wwk" "$R$WS"
mkdir -p "$R/runner/_work/_temp/_runner_file_commands"
: > "$R/runner/_work/_temp/_runner_file_commands/set_env_0"
: > "$R/runner/_work/_temp/_runner_file_commands/step_summary_0"
cp "$S/step.sh" "$R/runner/_work/_temp/step.sh"
mapfile -d '' E < "$S/env0"
set +e
chroot "$R" /usr/bin/env -i "${E[@]}" /usr/bin/env -C "$WS" $(cat "$S/shell") /runner/_work/_temp/step.sh < /dev/null
rc=$?
echo "$rc" > "$S/rc"
# keep what the run left behind that the report wants (result files copied to the workspace)
ls -1 "$R$WS" > "$S/ws_after" 2>/dev/null
rm -rf "$S/artifacts"; mkdir -p "$S/artifacts"
cp -a "$R$WS/benchmark_artifacts/." "$S/artifacts/" 2>/dev/null
cp -a "$R/tmp/." "$S/artifacts/host_tmp/" 2>/dev/null
mkdir -p "$S/artifacts/slurm"; cp -a "$R/.rb/state/slurm/." "$S/artifacts/slurm/" 2>/dev/null
exit $rc
