# Shared helpers for scripts/: installing what hearth needs on Debian/Ubuntu.
# Sourced, not run.

# as_root runs a command as root, through sudo when needed.
as_root() {
	if [ "$(id -u)" -eq 0 ]; then "$@"; else sudo "$@"; fi
}

apt_updated=
# install_apt installs the Debian packages whose commands are missing.
# Arguments are package names; a package is skipped when a command of the
# same name exists already.
install_apt() {
	local missing=()
	for pkg in "$@"; do
		command -v "$pkg" >/dev/null 2>&1 || dpkg -s "$pkg" >/dev/null 2>&1 || missing+=("$pkg")
	done
	[ ${#missing[@]} -eq 0 ] && return 0
	echo "== installing ${missing[*]}"
	if [ -z "$apt_updated" ]; then
		as_root apt-get update -qq
		apt_updated=1
	fi
	as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
}

# install_go makes sure a Go toolchain able to build go.mod's version is
# on PATH. Debian's golang-go (1.21 or newer) fetches the exact toolchain
# go.mod asks for through the module proxy (GOTOOLCHAIN=auto).
install_go() {
	if [ -x /usr/local/go/bin/go ]; then
		export PATH="/usr/local/go/bin:$PATH"
	fi
	if ! command -v go >/dev/null 2>&1; then
		install_apt golang-go
	fi
	export GOTOOLCHAIN="${GOTOOLCHAIN:-auto}"
	export PATH="$(go env GOPATH)/bin:$PATH"
	go version
}
