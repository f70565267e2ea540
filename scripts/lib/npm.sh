# Sourced by the scripts that install pinned npm packages into .cache:
# a folder is done when its stamp, .installed, says what is wanted.

# Print the folder $1 and end the script when its stamp reads $2.
exit_if_installed() {
  if [[ -f "$1/.installed" && "$(cat "$1/.installed")" == "$2" ]]; then
    echo "$1"
    exit 0
  fi
}

# Install the packages $3... pinned, quietly, into the folder $1, whose
# package.json is $2 when it has none yet.
npm_install_pinned() (
  mkdir -p "$1"
  cd "$1"
  [[ -f package.json ]] || echo "$2" >package.json
  export npm_config_yes=true npm_config_fund=false npm_config_audit=false npm_config_update_notifier=false
  npm install --save-exact --loglevel=error "${@:3}" >&2
)

# Stamp the folder $1 with $2 and print it.
mark_installed() {
  echo "$2" >"$1/.installed"
  echo "$1"
}
