# shellcheck shell=bash
# Where deploy/install.sh puts a service's configuration and unit; deploy/uninstall.sh removes the same.
# shellcheck disable=SC2034  # used by the scripts that source this

ETC=/etc/chatterd
ENV_FILE=$ETC/chatterd.env
MANIFEST=$ETC/install.conf
UNIT=/etc/systemd/system/chatterd.service
