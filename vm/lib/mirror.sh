# mirror_uri: the Debian mirror this machine's apt already uses (the first URIs: line of its
# Debian source, the security archive left out), so no host is written in scxkit's files.
# Source it; it defines the function only.
mirror_uri() {
    local uri
    uri=$(grep -h '^URIs:' /etc/apt/sources.list.d/debian.sources 2>/dev/null | grep -v security | head -n1 | awk '{print $2}')
    if [ -z "$uri" ]; then
        uri=$(grep -hE '^deb ' /etc/apt/sources.list 2>/dev/null | grep -v security | head -n1 | awk '{print $2}')
    fi
    [ -n "$uri" ] || { echo "cannot find the Debian mirror in the apt sources" >&2; return 1; }
    echo "$uri"
}
