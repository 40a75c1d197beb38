#!/usr/bin/env bash
# Sourced by deploy/check-deploy.sh and Tests/WebBrowserTests/run.sh: a virtual environment of
# pinned PyPI packages on Debian's own Python (whose system pip refuses to install: PEP 668),
# made once and remade only when the requirements change.
#
# Usage: python_tools_venv DIRECTORY "requirement lines"  -> sets $venv to DIRECTORY/venv.

python_tools_venv() {
  local tools=$1 requirements=$2 package missing=()
  for package in python3 python3-venv; do
    dpkg-query -W -f='${Status}' "$package" 2> /dev/null | grep -q "install ok installed" || missing+=("$package")
  done
  if [ ${#missing[@]} -gt 0 ]; then
    echo "installing: ${missing[*]}"
    apt-get update
    DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends "${missing[@]}"
  fi
  venv="$tools/venv"
  # Debian's Python, not whichever python3 is first on PATH: it is the one installed above.
  if [ ! -x "$venv/bin/python" ] || ! "$venv/bin/python" -c 'pass' 2> /dev/null; then
    rm -rf "$venv" "$tools/requirements.txt"
    mkdir -p "$tools"
    /usr/bin/python3 -m venv "$venv"
  fi
  if ! cmp -s <(printf '%s\n' "$requirements") "$tools/requirements.txt" 2> /dev/null; then
    echo "installing into $venv: ${requirements//$'\n'/ }"
    printf '%s\n' "$requirements" > "$tools/requirements.in"
    "$venv/bin/pip" install --quiet --disable-pip-version-check -r "$tools/requirements.in"
    mv "$tools/requirements.in" "$tools/requirements.txt"
  fi
}
