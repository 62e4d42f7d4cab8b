#!/bin/bash
# Runs as PID 1 of a fresh pid+mount namespace. Builds a private root on tmpfs,
# then runs the workflow's launch lines under chroot with exactly the point env.
# args: slotdir treedir
set -e
S=$1 TREE=$2 STUBS=$3
R=$S/root
mount -t tmpfs -o size=4g,mode=755 rbroot "$R"
for d in usr etc dev sys; do mkdir -p "$R/$d"; done
ln -s usr/bin "$R/bin"; ln -s usr/lib "$R/lib"; ln -s usr/lib64 "$R/lib64"; ln -s usr/sbin "$R/sbin"
mount --rbind /usr "$R/usr"; mount --rbind /etc "$R/etc"; mount --rbind /dev "$R/dev"; mount -t tmpfs -o size=2000g,mode=1777 rbshm "$R/dev/shm"; mount --rbind /sys "$R/sys"
mount --bind /tmp/rb/lib/profile "$R/etc/profile"
mkdir -p "$R/proc"; mount -t proc proc "$R/proc"
# /sys/class: a private copy with the RDMA rails a GPU node has (plus the real net class)
mount -t tmpfs rbsysclass "$R/sys/class"
mkdir -p "$R/sys/class/net"; mount --rbind /sys/class/net "$R/sys/class/net" 2>/dev/null || true
mkdir -p "$R"/sys/class/infiniband/mlx5_{0..23}/ports/1
for i in {0..23}; do echo "4: ACTIVE" > "$R/sys/class/infiniband/mlx5_$i/ports/1/state"; echo "5: LinkUp" > "$R/sys/class/infiniband/mlx5_$i/ports/1/phys_state"; done
PY=/root/.pyenv/versions/3.11.7
mkdir -p "$R$PY"; mount --bind "$PY" "$R$PY"; mount -o remount,bind,ro "$R$PY" 2>/dev/null || true
mkdir -p "$R/.rb/stubs" "$R/.rb/rec" "$R/.rb/state" "$R/.rb/info" "$R/.rb/ovl/up" "$R/.rb/ovl/wk" "$R/tmp" "$R/var/tmp" "$R/root" "$R/home/runner" "$R/mnt" "$R/run"
chmod 1777 "$R/tmp" "$R/var/tmp"
mount --bind "$STUBS" "$R/.rb/stubs"
mount --bind "$S/rec" "$R/.rb/rec"
cp -a "$S/info/." "$R/.rb/info/"
WS=$(cat "$S/info/workspace")
mapfile -t PRE < "$S/info/precreate"
[ ${#PRE[@]} -gt 0 ] && mkdir -p "${PRE[@]/#/$R}"
mkdir -p "$R$WS"
mount -t overlay rbws -o "lowerdir=$TREE,upperdir=$R/.rb/ovl/up,workdir=$R/.rb/ovl/wk" "$R$WS"
mkdir -p "$R/runner/_work/_temp/_runner_file_commands"
: > "$R/runner/_work/_temp/_runner_file_commands/set_env_0"
: > "$R/runner/_work/_temp/_runner_file_commands/step_summary_0"
cp "$S/step.sh" "$R/runner/_work/_temp/step.sh"
mapfile -d '' E < "$S/env0"
set +e
chroot "$R" /usr/bin/env -i "${E[@]}" /usr/bin/env -C "$WS" $(cat "$S/info/shell") /runner/_work/_temp/step.sh < /dev/null
rc=$?
echo "$rc" > "$S/rc"
exit $rc
