# vm: --rootfs debian --cpus 2 --nodes 1 --tcg-threads single
# kernels: 7.3
# The Debian package and its service, in the Debian guest with systemd (tests/guest.sh puts
# the package, built by packaging/build-deb.sh, at /root/scxkit.deb): install, configure
# through upstream's /etc/default/scx, enable; after a reboot the scheduler runs and logs to
# the journal; systemd brings it back after a SIGKILL; a bad option fails the unit without a
# loop; a scheduler that cannot start is given up after the start limit; removal leaves
# nothing running. The first boot ends in a reboot; the scenario then runs again (SCXKIT_BOOT=2).
. /scxkit/lib.sh
SCHEDULERS="scx_simple scx_bpfland scx_rustland scx_rusty scx_fifo"
UNIT=scxkit.service

unit_prop() { systemctl show -p "$1" --value "$UNIT"; }
main_pid() { unit_prop MainPID; }
# journal_has PATTERN: this boot's journal of the unit has a line matching PATTERN.
journal_has() { journalctl -b -u "$UNIT" --no-pager -o cat | grep -q -- "$1"; }
journal_tail() { journalctl -b -u "$UNIT" --no-pager -o cat | tail -n "${1:-8}"; }
unit_failed() { [ "$(systemctl is-failed "$UNIT")" = failed ]; }
loaded_bpfland() { is_enabled && [ "$(sched_ops)" = bpfland ]; }

if [ "${SCXKIT_BOOT:-1}" -eq 1 ]; then
    # 1. Install: the files are there, nothing starts by itself.
    if out=$(dpkg -i /root/scxkit.deb 2>&1); then pass "the package installs (dpkg -i)"
    else fail "the package installs" "$(echo "$out" | grep -v '^ *(Reading\|^Selecting\|^Preparing\|^Unpacking' | head -n 4)"; finish; exit; fi
    missing=""
    for s in $SCHEDULERS; do
        for f in /usr/bin/$s /usr/share/man/man8/$s.8.gz /usr/share/bash-completion/completions/$s \
                /usr/share/zsh/vendor-completions/_$s /usr/share/fish/vendor_completions.d/$s.fish; do
            [ -e "$f" ] || missing="$missing $f"
        done
        grep -q "^#   $s " /etc/default/scxkit || missing="$missing $s-in-/etc/default/scxkit"
    done
    for f in /usr/lib/systemd/system/$UNIT /usr/lib/scxkit/scxkit-launch /usr/share/doc/scxkit/README.md; do
        [ -e "$f" ] || missing="$missing $f"
    done
    if [ -z "$missing" ]; then pass "it holds the schedulers, their man pages and completions, the unit, the configuration naming every scheduler, the README"
    else fail "the package's files" "missing:$(echo $missing | cut -d' ' -f1-6)"; fi
    if zcat /usr/share/man/man8/scx_bpfland.8.gz | grep -q 'primary\\-domain' \
            && grep -q -- '--primary-domain' /usr/share/bash-completion/completions/scx_bpfland; then
        pass "the man page and the completion carry the scheduler's own options (--primary-domain)"
    else fail "the man page and completion of scx_bpfland" "no --primary-domain"; fi
    if [ "$(systemctl is-active $UNIT)" != active ] && is_disabled; then pass "installing starts nothing"
    else fail "installing starts nothing" "unit $(systemctl is-active $UNIT), sched_ext $(sched_state)"; fi

    # 2. An existing upstream configuration, then enable --now.
    printf '%s\n' 'SCX_SCHEDULER=scx_bpfland' 'SCX_FLAGS="--stats 2"' > /etc/default/scx
    systemctl enable --now "$UNIT" 2>/dev/null
    if wait_for 90 loaded_bpfland && [ "$(systemctl is-enabled $UNIT)" = enabled ]; then
        pass "systemctl enable --now starts scx_bpfland, as upstream's /etc/default/scx names it"
    else fail "enable --now" "sched_ext $(sched_state) '$(sched_ops)'; $(journal_tail)"; fi
    reboot_guest
fi

# 3. After the reboot: loaded by the service, its log in the journal.
if wait_for 120 loaded_bpfland && [ "$(systemctl is-active $UNIT)" = active ]; then
    pass "after a reboot the service has loaded scx_bpfland (state enabled, root/ops bpfland)"
else fail "loaded after a reboot" "unit $(systemctl is-active $UNIT), sched_ext $(sched_state) '$(sched_ops)'; $(journal_tail)"; fi
wait_for 30 journal_has "INFO  dispatched [0-9]*:"
absent=""
for line in "scxkit: starting scx_bpfland --stats 2" "scx_bpfland: attached; sched_ext is on" "INFO  dispatched [0-9]*:"; do
    journal_has "$line" || absent="$absent '$line'"
done
if [ -z "$absent" ]; then pass "the journal has the launcher's line, the scheduler's start and its stats lines"
else fail "the scheduler's log in the journal" "no line matches$absent; its start: $(journalctl -b -u "$UNIT" --no-pager -o cat | head -n 6)"; fi

# 4. SIGKILL: systemd starts it again.
pid=$(main_pid)
kill -KILL "$pid"
restarted() { [ "$(main_pid)" != "$pid" ] && [ "$(main_pid)" != 0 ] && loaded_bpfland && [ "$(unit_prop NRestarts)" -ge 1 ]; }
if wait_for 60 restarted; then
    pass "after SIGKILL systemd starts the scheduler again (pid $pid -> $(main_pid), NRestarts $(unit_prop NRestarts))"
else fail "restart after SIGKILL" "pid $(main_pid), NRestarts $(unit_prop NRestarts), sched_ext $(sched_state); $(journal_tail)"; fi

# 5. A bad option in /etc/default/scxkit (which wins over /etc/default/scx): the unit fails at
# once with the option in the journal, is not restarted, and the kernel is on its default.
cp /etc/default/scxkit /tmp/scxkit.default
echo 'SCX_FLAGS="--stats 2 --no-such-option"' >> /etc/default/scxkit
systemctl reset-failed "$UNIT"
systemctl restart "$UNIT"
wait_for 30 unit_failed
sleep 5
starts=$(journalctl -b -u "$UNIT" --no-pager -o cat | grep -c "scxkit: starting scx_bpfland --stats 2 --no-such-option")
if unit_failed && is_disabled && journal_has "unexpected argument '--no-such-option'" && [ "$starts" -eq 1 ]; then
    pass "a bad option fails the unit, named in the journal, started once, sched_ext disabled"
else fail "a bad option" "unit $(systemctl is-active $UNIT), sched_ext $(sched_state), started $starts times; $(journal_tail)"; fi
# A name that is not one of scxkit's schedulers, the same way.
printf '%s\n' 'SCX_SCHEDULER=scx_lavd' > /etc/default/scxkit
systemctl reset-failed "$UNIT"
systemctl restart "$UNIT"
if wait_for 30 unit_failed && is_disabled && journal_has "'scx_lavd' .* is not one of scxkit's"; then
    pass "an unknown scheduler's name fails the unit with a message naming it"
else fail "an unknown scheduler" "unit $(systemctl is-active $UNIT); $(journal_tail)"; fi
cp /tmp/scxkit.default /etc/default/scxkit

# 6. A scheduler that cannot start (another one holds sched_ext) is started again within the
# limit, then given up.
scx_simple > /tmp/simple.log 2>&1 &
other=$!
wait_for 60 is_enabled
systemctl reset-failed "$UNIT"
systemctl restart "$UNIT"
# systemd's own words when it gives up.
given_up() { unit_failed && journal_has "Start request repeated too quickly"; }
if wait_for 90 given_up && journal_has "another sched_ext scheduler is loaded: 'simple'"; then
    pass "a scheduler failing at once is given up at the start limit ($(unit_prop NRestarts) restarts), the reason in the journal"
else fail "the start limit" "unit $(systemctl is-active $UNIT), result $(unit_prop Result), NRestarts $(unit_prop NRestarts); $(journal_tail)"; fi
kill -INT "$other"; wait "$other"
wait_for 30 is_disabled

# 7. Removal stops it and leaves nothing running.
systemctl reset-failed "$UNIT"
systemctl start "$UNIT"
wait_for 90 loaded_bpfland || fail "started again before removal" "$(journal_tail)"
out=$(dpkg --purge scxkit 2>&1) || fail "dpkg --purge scxkit" "$(echo "$out" | tail -n 5)"
left=""
for s in $SCHEDULERS; do pgrep -x "$s" >/dev/null && left="$left $s"; done
if wait_for 30 is_disabled && [ -z "$left" ] && [ ! -e /usr/bin/scx_bpfland ] && [ ! -e /etc/default/scxkit ] \
        && [ ! -e /etc/systemd/system/multi-user.target.wants/$UNIT ] && [ "$(systemctl is-active $UNIT)" != active ]; then
    pass "removing the package stops the scheduler: nothing of it left running or installed"
else fail "removal" "running: '$left', sched_ext $(sched_state), unit $(systemctl is-active $UNIT); $(ls /usr/bin/scx_* /etc/default/scxkit 2>&1 | head -n 3)"; fi
finish
