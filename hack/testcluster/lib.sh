# Shared by down.sh and restart.sh (sourced): which recorded PIDs are still ours.

# A PID file can outlive its process, and the PID can be reused by an unrelated
# program: only signal a PID whose executable has the name we started.
ours() { # name pid
  local exe
  exe=$(readlink "/proc/$2/exe" 2>/dev/null) || return 1
  [ "$(basename "${exe% (deleted)}")" = "$1" ]
}

# Alive and not a zombie: a zombie is dead but answers kill -0 until reaped.
alive() {
  kill -0 "$1" 2>/dev/null && [ "$(awk '{print $3}' "/proc/$1/stat" 2>/dev/null)" != Z ]
}
