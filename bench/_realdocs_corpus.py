"""The real-documents corpus of ``bench/research_realdocs.py``, rebuilt from this machine's own files.

Nothing here is committed text: every file is rendered or copied at run time from
installed packages. Needed (Debian): ``man-db`` and ``groff-base`` (``man``, ``groff``,
``col``), ``manpages-zh`` (Chinese man pages), the packages whose man pages and
READMEs are listed below (coreutils, grep, tar, findutils, sed, gzip, diffutils,
openssh-client, curl, make, less, dpkg, procps, jq, bc, e2fsprogs, git, …), and
``python3`` for pydoc pages. A missing source is reported and skipped, never faked.
"""

from __future__ import annotations

import gzip
import os
import shutil
import subprocess
import sys
from pathlib import Path

#: English man pages, rendered by ``man`` at 100 columns (hard-wrapped, justified, hyphenated).
MAN_PAGES = ("grep", "tar", "ls", "cp", "find", "sed", "gzip", "sort", "uniq", "wc", "head", "tail", "chmod",
             "ln", "df", "du", "xargs", "diff", "mkdir", "cut", "tr", "date", "kill", "tee", "touch", "rm", "mv",
             "ssh", "curl", "make", "less", "dpkg")
#: READMEs shipped in /usr/share/doc (plain or gzipped).
READMES = ("base-files/README.FHS", "bc/README", "cscope/README", "e2fsprogs/README", "fakeroot/README",
           "gettext/README", "grep/README", "jq/README", "git/README.md", "fonts-dejavu-core/README.md",
           "findutils/README.gz", "gzip/README.gz", "ed/README.gz", "bash/README.gz", "coreutils/README.gz",
           "apt/README.md.gz", "dpkg/README.feature-removal-schedule.gz")
#: Python modules whose pydoc text page is part of the corpus.
PYDOC = ("json", "textwrap", "shutil", "zipfile")
#: Chinese man pages (manpages-zh), rendered with groff at 100 columns.
ZH_MAN_PAGES = ("tar", "date", "ls", "cp", "grep", "find", "chmod", "mkdir", "rm", "gzip", "sort", "kill", "df",
                "du", "ln")

# The held-out corpus (``build_corpus(folder, holdout=True)``): everything above plus these, for
# ``bench/data/realdocs_holdout.json``, a question set nothing was tuned on.
#: More English man pages of installed commands.
HOLDOUT_MAN_PAGES = ("cat", "chown", "stat", "timeout", "seq", "split", "tac", "nl", "paste", "join", "comm",
                     "uname", "env", "nice", "nohup", "ps", "free", "bzip2", "xz", "zip", "unzip", "wget", "scp",
                     "file", "strings", "base64", "mktemp", "dd", "truncate", "shuf", "watch", "mawk",
                     "ssh-keygen", "patch", "cmp")
#: More READMEs in /usr/share/doc.
HOLDOUT_READMES = ("mawk/README", "patch/README", "net-tools/README", "openssh-client/README.dns",
                   "make/README.gz", "gdb/README.gz", "man-db/README.md.gz", "base-passwd/README",
                   "debianutils/README.shells.gz", "openssl/README.md.gz", "fakeroot/README.saving",
                   "gnupg/README.gz", "adduser/README.gz", "init-system-helpers/README.policy-rc.d.gz")
#: Debian changelogs (``/usr/share/doc/PACKAGE/changelog.Debian.gz``, else ``changelog.gz``), decompressed.
HOLDOUT_CHANGELOGS = ("coreutils", "gzip", "curl", "make", "e2fsprogs", "openssh-client", "git", "man-db", "bc",
                      "procps", "bash", "findutils", "apt", "dpkg")
#: At most this many characters of a changelog (its start, cut at a line end).
CHANGELOG_CHARS = 200_000
#: More Chinese man pages (manpages-zh).
HOLDOUT_ZH_MAN_PAGES = ("cat", "head", "tail", "wc", "uniq", "cut", "touch", "mv", "chown", "xargs", "seq",
                        "split", "tee")

# The review corpus (``build_corpus(folder, review=True)``): the first corpus plus these manual pages, which no
# question set had used, for ``bench/data/realdocs_review.json`` (a development set, like the first).
#: Configuration-file and administration pages (sections 5 and 8 among them).
REVIEW_MAN_PAGES = ("fstab", "adduser.conf", "gitignore", "apt_preferences", "journalctl", "xxd", "apt-get")

# The third held-out corpus (``build_corpus(folder, third=True)``): the held-out and review corpora plus these pages,
# for ``bench/data/realdocs_third.json``, written by someone who had not read the code, from these pages only.
#: English man pages, with their section where the name is ambiguous (``passwd`` is also a command).
THIRD_MAN_PAGES = ("1 tr", "1 column", "1 realpath", "1 csplit", "1 numfmt", "1 install", "1 git-stash",
                   "1 timedatectl", "5 ssh_config", "5 hosts", "5 passwd", "5 shadow", "5 group", "5 resolv.conf",
                   "5 nsswitch.conf", "5 login.defs", "5 sysctl.conf", "8 useradd", "8 usermod", "8 lsblk")
#: Chinese man pages (manpages-zh).
THIRD_ZH_MAN_PAGES = ("chgrp", "expand", "fold", "id", "md5sum", "od", "passwd", "rmdir")

# The fourth held-out corpus (``build_corpus(folder, fourth=True)``): the third corpus plus these pages, for
# ``bench/data/realdocs_fourth.json``, written (like the third) by someone who had not read the code.
FOURTH_MAN_PAGES = ("1 flock", "1 getopt", "1 logger", "1 pgrep", "1 fuser", "1 script", "1 ionice", "1 zstd",
                    "5 limits.conf", "5 faillock.conf", "5 journald.conf", "5 timesyncd.conf", "5 host.conf",
                    "5 e2fsck.conf", "8 start-stop-daemon", "8 run-parts", "8 savelog", "8 mkswap", "7 glob",
                    "7 signal")
FOURTH_ZH_MAN_PAGES = ("at", "pg_ctl", "more", "ac", "hostnamectl", "lockfile", "eject", "cpio")

# The fifth held-out corpus (``build_corpus(folder, fifth=True)``): the fourth corpus plus these pages, for
# ``bench/data/realdocs_fifth.json``, written the same way after the fourth set had been studied.
FIFTH_MAN_PAGES = ("1 chattr", "1 su", "1 hardlink", "1 lz4", "1 ssh-agent", "1 fallocate", "1 chrt", "1 sqlite3",
                   "5 logind.conf", "5 mke2fs.conf", "5 access.conf", "5 systemd.timer", "5 machine-id", "8 fstrim",
                   "8 badblocks", "8 rotatelogs", "8 userdel", "8 pam_unix", "7 pipe", "7 random")
FIFTH_ZH_MAN_PAGES = ("stty", "pr", "dig", "minicom", "pg_dump", "initdb", "loadkeys", "ftp")

SIXTH_MAN_PAGES = ("1 shred", "1 taskset", "1 prlimit", "1 dmesg", "1 namei", "1 ssh-keyscan", "1 renice", "1 whereis",
                   "5 deluser.conf", "5 sources.list", "5 gai.conf", "5 time.conf", "5 services", "8 losetup",
                   "8 wipefs", "8 pwck", "8 rtcwake", "8 update-rc.d", "7 environ", "7 symlink")
SIXTH_ZH_MAN_PAGES = ("killall", "stdbuf", "showkey", "mkpasswd", "w", "uuencode", "whatis", "vacuumdb")

SEVENTH_MAN_PAGES = ("1 nsenter", "1 pstree", "1 getent", "1 hexdump", "1 look", "1 update-alternatives", "1 runuser",
                     "1 setpriv", "5 os-release", "5 crypt", "5 pam.conf", "5 systemd-sleep.conf", "5 gshadow",
                     "8 fsfreeze", "8 faillog", "8 ldconfig", "8 blkdiscard", "8 newusers", "7 path_resolution",
                     "7 hier")
SEVENTH_ZH_MAN_PAGES = ("expr", "test", "createdb", "loginctl", "setleds", "dumpkeys", "hostname", "pg_restore")

EIGHTH_MAN_PAGES = ("1 mountpoint", "1 choom", "1 mcookie", "1 tempfile", "1 mesg", "1 lslogins", "1 ipcrm",
                    "1 uclampset", "5 subuid", "5 pam_env.conf", "5 adjtime_config", "5 tmpfs", "5 capability.conf",
                    "8 lastlog", "8 pidof", "8 logsave", "8 pam_wheel", "8 pam_pwhistory", "7 fifo", "7 pty")
EIGHTH_ZH_MAN_PAGES = ("systemd-cat", "systemd-inhibit", "systemd-detect-virt", "localectl", "mknod", "createuser",
                       "wall", "sleep")

NINTH_MAN_PAGES = ("1 ischroot", "1 ipcmk", "1 setsid", "1 utmpdump", "1 lsmem", "1 scriptreplay", "1 envsubst",
                   "1 tload", "5 group.conf", "5 namespace.conf", "5 pstore.conf", "5 machine-info", "5 networks",
                   "8 pam_mkhomedir", "8 pam_nologin", "8 killall5", "8 groupmems", "8 zramctl", "7 mq_overview",
                   "7 xattr")
NINTH_ZH_MAN_PAGES = ("systemd-escape", "systemd-delta", "systemd-notify", "systemd-ask-password", "systemd-firstboot",
                      "unexpand", "sum", "chsh")

TENTH_MAN_PAGES = ("1 lsipc", "1 slabtop", "1 skill", "1 sdiff", "1 pmap", "1 gzexe", "1 tabs", "1 setterm",
                   "5 sysctl.d", "5 hosts.equiv", "5 deb-triggers", "5 acct", "5 locale.conf", "8 pam_umask",
                   "8 pam_exec", "8 groupmod", "8 lslocks", "8 filefrag", "7 time", "7 sem_overview")
TENTH_ZH_MAN_PAGES = ("readlink", "systemd-machine-id-setup", "systemd-socket-activate", "sha1sum", "networkctl",
                      "last", "who", "printf")

ELEVENTH_MAN_PAGES = ("1 unshare", "1 lscpu", "1 pldd", "1 lzmainfo", "1 zipsplit", "1 znew", "1 peekfd", "1 ul",
                      "5 apt_auth.conf", "5 binfmt.d", "5 deb-substvars", "5 ucf.conf", "5 user-dirs.dirs",
                      "8 e4defrag", "8 ctrlaltdel", "8 pam_listfile", "8 runlevel", "8 e2undo", "7 units", "7 mailaddr")
ELEVENTH_ZH_MAN_PAGES = ("cal", "usleep", "systemd-cgls", "kbd_mode", "systemd-path", "bootctl",
                         "systemd-tty-ask-password-agent", "deallocvt")

TWELFTH_MAN_PAGES = ("1 fincore", "1 scriptlive", "1 ucfr", "1 sotruss", "1 xdg-user-dirs-update", "1 zipcloak",
                     "1 encguess", "1 zipnote", "5 sepermit.conf", "5 deb-split", "5 modules-load.d", "5 netconfig",
                     "5 deb-origin", "8 wdctl", "8 e2freefrag", "8 pam_timestamp", "8 iconvconfig", "8 fstab-decode",
                     "7 shm_overview", "7 persistent-keyring")
TWELFTH_ZH_MAN_PAGES = ("finger", "biff", "apm", "unicode_start", "psfaddtable", "size", "dropuser", "zless")

THIRTEENTH_MAN_PAGES = ("1 gpasswd", "1 chfn", "1 tset", "1 streamzip", "1 sprof", "1 memusage", "1 lessecho",
                        "1 zipdetails", "5 editrc", "5 semanage.conf", "5 user_clusters", "5 deb-shlibs",
                        "5 integritytab", "8 pam_issue", "8 readprofile", "8 update-passwd", "8 pam_securetty",
                        "8 e2scrub", "7 time_namespaces", "7 sigevent")
THIRTEENTH_ZH_MAN_PAGES = ("setmetamode", "dnsquery", "createlang", "8 quotacheck", "8 mingetty", "8 showmount",
                           "8 exportfs", "8 edquota")

FOURTEENTH_MAN_PAGES = ("1 ssh-copy-id", "1 htpasswd", "1 dpkg-divert", "1 ipcs", "1 funzip", "1 gpgv", "1 lsb_release",
                        "1 xkill", "5 environment.d", "5 veritytab", "5 init-d-script", "5 dir_colors", "5 nss",
                        "8 pam_motd", "8 pam_faildelay", "8 resize2fs", "8 update-ca-certificates", "8 setarch",
                        "7 kernel_lockdown", "7 numa")
FOURTEENTH_ZH_MAN_PAGES = ("pg_resetxlog", "host", "8 ping", "8 fdisk", "8 lspci", "8 xinetd", "8 cron", "8 hdparm")

FIFTEENTH_MAN_PAGES = ("1 dpkg-statoverride", "1 dpkg-trigger", "1 dpkg-split", "1 diff3", "1 apt-transport-mirror",
                       "1 colcrt", "1 zipgrep", "1 toe", "5 Xsession.options", "5 libaudit.conf", "5 ethers",
                       "5 deb-md5sums", "5 deb-conffiles", "8 pam_mail", "8 mii-tool", "8 pam_lastlog",
                       "8 blkdeactivate", "8 tc-tbf", "7 udplite", "7 session-keyring")
FIFTEENTH_ZH_MAN_PAGES = ("rlogin", "msmtp", "mpg123", "smbtar", "8 inetd", "8 rdev", "8 setserial", "8 chat")

SIXTEENTH_MAN_PAGES = ("1 dpkg-name", "1 dbus-uuidgen", "1 xmessage", "1 luit", "1 piconv", "1 debconf-set-selections",
                       "1 bzmore", "1 unzipsfx", "5 deb-old", "5 subgid", "5 pkgconf-personality",
                       "5 terminal-colors.d", "8 pam_loginuid", "8 pam_ftp", "8 chcpu", "8 mkfs.minix", "8 tc-sfq",
                       "8 ldattach", "7 deb-version", "7 vsock")
SIXTEENTH_ZH_MAN_PAGES = ("testparm", "droplang", "nmblookup", "findsmb", "8 smbpasswd", "8 makemap", "8 setquota",
                          "8 mailstats")

SEVENTEENTH_MAN_PAGES = ("1 dbus-run-session", "1 sqldiff", "1 strace-log-merge", "1 debconf-apt-progress",
                         "1 dpkg-maintscript-helper", "1 zforce", "1 ucfq", "1 dpkg-realpath", "5 gitmailmap",
                         "5 user-dirs.conf", "5 deb-extra-override", "5 dpkg.cfg", "8 swaplabel", "8 isosize",
                         "8 e2mmpstatus", "8 update-shells", "8 slattach", "8 pam_userdb", "7 futex", "7 landlock")
SEVENTEENTH_ZH_MAN_PAGES = ("smbstatus", "ipcclean", "quota", "texindex", "8 svnserve", "8 ntsysv", "8 imapd",
                            "8 convertquota")

EIGHTEENTH_MAN_PAGES = ("1 tput", "1 lesskey", "1 xauth", "1 capsh", "1 fc-cache", "1 sensible-editor",
                        "1 debconf-show", "1 dbus-cleanup-sockets", "5 core", "5 ldap.conf", "5 gitmodules",
                        "5 charmap", "8 invoke-rc.d", "8 tc-netem", "8 findfs", "8 switch_root", "8 make-ssl-cert",
                        "8 mklost+found", "7 inotify", "7 apt-patterns")
EIGHTEENTH_ZH_MAN_PAGES = ("mail", "xmodmap", "makeinfo", "dnskeygen", "8 tcpdump", "8 pppd", "8 lilo", "8 printcap")

NINETEENTH_MAN_PAGES = ("1 git-worktree", "1 dpkg-query", "1 lsfd", "1 openssl-rehash", "1 strace", "1 ptx",
                        "5 apt.conf", "5 magic", "5 githooks", "5 deb-control", "8 apt-mark", "8 blkid",
                        "8 pam_succeed_if", "8 tc-htb", "8 sysctl", "8 agetty", "7 pid_namespaces", "7 credentials",
                        "2 sendfile", "3 mkstemp")
NINETEENTH_ZH_MAN_PAGES = ("smbclient", "install-info", "texi2dvi", "5 inittab", "5 aliases", "8 iptables",
                           "8 modinfo", "8 rpm")

TWENTIETH_MAN_PAGES = ("1 git-reflog", "1 getconf", "1 msgfmt", "1 ninja", "1 openssl-passwd", "5 locale.gen",
                       "5 ext4", "5 deb-symbols", "5 gitweb.conf", "8 findmnt", "8 e2fsck", "8 ss", "8 apt-cache",
                       "8 lsns", "8 partx", "7 inode", "7 gitcredentials", "2 dup", "3 strtol", "3 strftime")
TWENTIETH_ZH_MAN_PAGES = ("wbinfo", "smbcontrol", "5 nscd.conf", "5 ftpaccess", "7 samba", "8 repquota", "8 nmbd",
                          "8 quotaon")

TWENTYFIRST_MAN_PAGES = ("1 dpkg-buildflags", "1 top", "1 gio", "1 readelf", "1 tic", "5 x509v3_config",
                         "5 gitrepository-layout", "5 dsc", "5 fonts-conf", "8 ip-netns", "8 apt-secure", "8 lsof",
                         "8 debugfs", "8 dpkg-reconfigure", "7 signal-safety", "7 openssl-env", "2 fsync", "2 fcntl",
                         "3 popen", "3 getaddrinfo")
TWENTYFIRST_ZH_MAN_PAGES = ("mirror", "xpdf", "emacs", "5 keymaps", "5 smb.conf", "7 roff", "8 smbd", "8 smbmount")

TWENTYSECOND_MAN_PAGES = ("1 dpkg-deb", "1 nm", "1 xprop", "1 add-apt-repository", "1 gsettings", "5 deb-changelog",
                          "5 sysfs", "5 Compose", "5 tags", "8 ld.so", "8 e2image", "8 pam_limits", "8 ip-rule",
                          "8 tc-fq_codel", "7 gitrevisions", "7 feature_test_macros", "2 eventfd", "2 lseek",
                          "3 dlopen", "3 strptime")
TWENTYSECOND_ZH_MAN_PAGES = ("tex", "yppasswd", "subst", "5 svnserve.conf", "5 lmhosts", "7 perlstyle", "8 swat",
                             "8 smbspool")

TWENTYTHIRD_MAN_PAGES = ("1 git-bundle", "1 addr2line", "1 dpkg-architecture", "1 xwininfo", "1 gdbus",
                         "5 deb-buildinfo", "5 deb-postinst", "5 filesystems", "5 term", "8 pam_shells",
                         "8 dumpe2fs", "8 pivot_root", "8 ip-neighbour", "8 apt-key", "7 boot", "7 uri",
                         "2 timerfd_create", "2 memfd_create", "3 getline", "3 atexit")
TWENTYTHIRD_ZH_MAN_PAGES = ("make_smbcodepage", "testprns", "ecpg", "smbsh", "5 vconsole.conf", "7 create_sequence",
                            "8 MAKEDEV", "8 iptables-save")

TWENTYFOURTH_MAN_PAGES = ("1 git-archive", "1 c++filt", "1 xev", "1 gapplication", "1 lesspipe", "5 deb-changes",
                          "5 pc", "5 deb822", "5 scr_dump", "8 ip-route", "8 apt-cdrom", "8 pam_tty_audit",
                          "8 chmem", "8 pam-auth-update", "7 math_error", "7 ipv6", "2 getrandom",
                          "2 copy_file_range", "3 strtok", "3 backtrace")
TWENTYFOURTH_ZH_MAN_PAGES = ("smbrun", "sq", "listalias", "5 resolved.conf", "7 hwdb", "7 create_view",
                             "8 nss-myhostname", "8 smbumount")

TWENTYFIFTH_MAN_PAGES = ("1 pod2man", "1 gprof", "1 dpkg-scanpackages", "1 prove", "1 dbus-send", "5 deb",
                         "5 deb-src-rules", "5 user_caps", "5 gitprotocol-http", "8 ip-address", "8 polkit",
                         "8 pam_xauth", "8 dpkg-fsys-usrunmess", "8 rmt-tar", "7 user_namespaces", "7 pthreads",
                         "2 mlock", "2 posix_fadvise", "3 mallopt", "3 tzset")
TWENTYFIFTH_ZH_MAN_PAGES = ("systemd-resolve", "octave-bug", "initlocation", "5 texinfo", "7 perlsec",
                            "7 perlnumber", "8 nss-mymachines", "8 named-bootconf")


def _plain(text: str) -> str:
    """Overstrikes removed (what ``col -bx`` does), as a reader sees the page."""
    done = subprocess.run(["col", "-bx"], input=text, capture_output=True, text=True, check=True)
    return done.stdout


def render_man(name: str) -> str | None:
    """A man page at 100 columns; ``name`` may name its section first ("5 passwd")."""
    env = {**os.environ, "MANWIDTH": "100", "MAN_KEEP_FORMATTING": "0", "LC_ALL": "C.UTF-8"}
    done = subprocess.run(["man", "-P", "cat", *name.split()], capture_output=True, text=True, env=env)
    return _plain(done.stdout) if done.returncode == 0 and done.stdout.strip() else None


def render_zh_man(name: str) -> str | None:
    """A Chinese man page at 100 columns; ``name`` may name its section first ("8 quotacheck"; default 1)."""
    section, _, page = name.rpartition(" ")
    section = section or "1"
    source = Path(f"/usr/share/man/zh_CN/man{section}") / f"{page}.{section}.gz"
    if not source.exists():
        return None
    raw = gzip.decompress(source.read_bytes()).decode("utf-8", "replace")
    done = subprocess.run(["groff", "-k", "-Tutf8", "-man", "-rLL=100n", "-P-c"], input=raw, capture_output=True,
                          text=True, env={**os.environ, "LC_ALL": "C.UTF-8"})
    return _plain(done.stdout) if done.returncode == 0 and done.stdout.strip() else None


def read_readme(relative: str) -> str | None:
    path = Path("/usr/share/doc") / relative
    if not path.exists():
        return None
    return _decode(gzip.decompress(path.read_bytes()) if path.suffix == ".gz" else path.read_bytes())


def _decode(raw: bytes) -> str:
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        return raw.decode("latin-1")


def read_changelog(package: str) -> str | None:
    """A package's Debian changelog (else its ``changelog.gz``), decompressed, cut to its start."""
    for name in ("changelog.Debian.gz", "changelog.gz"):
        path = Path("/usr/share/doc") / package / name
        if path.exists():
            text = _decode(gzip.decompress(path.read_bytes()))
            if len(text) > CHANGELOG_CHARS:
                text = text[:text.rfind("\n", 0, CHANGELOG_CHARS) + 1]
            return text
    return None


def render_pydoc(module: str) -> str | None:
    done = subprocess.run([sys.executable, "-m", "pydoc", module], capture_output=True, text=True,
                          env={**os.environ, "PAGER": "cat", "COLUMNS": "100"})
    return done.stdout if done.returncode == 0 and done.stdout.strip() else None


def corpus_name(kind: str, name: str) -> str:
    """The file name a source gets in the corpus folder (what the question sets refer to)."""
    stem = name.split()[-1].removesuffix(".gz").replace("/", "-")
    if kind == "readme":
        return f"readme-{stem}.txt"
    return f"{kind}-{stem}.txt"


def build_corpus(folder: Path, holdout: bool = False, review: bool = False, third: bool = False,
                 fourth: bool = False, fifth: bool = False, sixth: bool = False, seventh: bool = False,
                 eighth: bool = False, ninth: bool = False, tenth: bool = False,
                 eleventh: bool = False, twelfth: bool = False,
                 thirteenth: bool = False, fourteenth: bool = False, fifteenth: bool = False,
                 sixteenth: bool = False, seventeenth: bool = False,
                 eighteenth: bool = False, nineteenth: bool = False,
                 twentieth: bool = False, twentyfirst: bool = False,
                 twentysecond: bool = False, twentythird: bool = False,
                 twentyfourth: bool = False, twentyfifth: bool = False) -> tuple[list[str], list[str]]:
    """Write every available source into ``folder`` (English) and ``folder/zh`` (Chinese).

    ``holdout``: the larger held-out corpus (the ``HOLDOUT_`` sources added); ``review``: the review pages
    added; ``third``: both, and the ``THIRD_`` pages; ``fourth``: all of these and the ``FOURTH_`` pages;
    ``fifth``: all of these and the ``FIFTH_`` pages; ``sixth``: all of these and the ``SIXTH_`` pages;
    ``seventh``: all of these and the ``SEVENTH_`` pages; ``eighth``: all of these and the ``EIGHTH_`` pages;
    ``ninth``: all of these and the ``NINTH_`` pages; ``tenth``: all of these and the ``TENTH_`` pages;
    ``eleventh``: all of these and the ``ELEVENTH_`` pages; ``twelfth``: all of these and the ``TWELFTH_`` pages;
    ``thirteenth``: all of these and the ``THIRTEENTH_`` pages; ``fourteenth``: all of these and the
    ``FOURTEENTH_`` pages; ``fifteenth``: all of these and the ``FIFTEENTH_`` pages; ``sixteenth``: all of these
    and the ``SIXTEENTH_`` pages; ``seventeenth``: all of these and the ``SEVENTEENTH_`` pages; ``eighteenth``: all
    of these and the ``EIGHTEENTH_`` pages; ``nineteenth``: all of these and the ``NINETEENTH_`` pages;
    ``twentieth``: all of these and the ``TWENTIETH_`` pages; ``twentyfirst``: all of these and the
    ``TWENTYFIRST_`` pages; ``twentysecond``: all of these and the ``TWENTYSECOND_`` pages; ``twentythird``: all
    of these and the ``TWENTYTHIRD_`` pages; ``twentyfourth``: all of these and the ``TWENTYFOURTH_`` pages;
    ``twentyfifth``: all of these and the ``TWENTYFIFTH_`` pages.
    Returns
    ``(written file names, missing sources)``.
    """
    # Each later set's corpus holds the earlier ones: a flag turns on every set before it too.
    later = [(third, THIRD_MAN_PAGES, THIRD_ZH_MAN_PAGES), (fourth, FOURTH_MAN_PAGES, FOURTH_ZH_MAN_PAGES),
             (fifth, FIFTH_MAN_PAGES, FIFTH_ZH_MAN_PAGES), (sixth, SIXTH_MAN_PAGES, SIXTH_ZH_MAN_PAGES),
             (seventh, SEVENTH_MAN_PAGES, SEVENTH_ZH_MAN_PAGES), (eighth, EIGHTH_MAN_PAGES, EIGHTH_ZH_MAN_PAGES),
             (ninth, NINTH_MAN_PAGES, NINTH_ZH_MAN_PAGES), (tenth, TENTH_MAN_PAGES, TENTH_ZH_MAN_PAGES),
             (eleventh, ELEVENTH_MAN_PAGES, ELEVENTH_ZH_MAN_PAGES), (twelfth, TWELFTH_MAN_PAGES, TWELFTH_ZH_MAN_PAGES),
             (thirteenth, THIRTEENTH_MAN_PAGES, THIRTEENTH_ZH_MAN_PAGES),
             (fourteenth, FOURTEENTH_MAN_PAGES, FOURTEENTH_ZH_MAN_PAGES),
             (fifteenth, FIFTEENTH_MAN_PAGES, FIFTEENTH_ZH_MAN_PAGES),
             (sixteenth, SIXTEENTH_MAN_PAGES, SIXTEENTH_ZH_MAN_PAGES),
             (seventeenth, SEVENTEENTH_MAN_PAGES, SEVENTEENTH_ZH_MAN_PAGES),
             (eighteenth, EIGHTEENTH_MAN_PAGES, EIGHTEENTH_ZH_MAN_PAGES),
             (nineteenth, NINETEENTH_MAN_PAGES, NINETEENTH_ZH_MAN_PAGES),
             (twentieth, TWENTIETH_MAN_PAGES, TWENTIETH_ZH_MAN_PAGES),
             (twentyfirst, TWENTYFIRST_MAN_PAGES, TWENTYFIRST_ZH_MAN_PAGES),
             (twentysecond, TWENTYSECOND_MAN_PAGES, TWENTYSECOND_ZH_MAN_PAGES),
             (twentythird, TWENTYTHIRD_MAN_PAGES, TWENTYTHIRD_ZH_MAN_PAGES),
             (twentyfourth, TWENTYFOURTH_MAN_PAGES, TWENTYFOURTH_ZH_MAN_PAGES),
             (twentyfifth, TWENTYFIFTH_MAN_PAGES, TWENTYFIFTH_ZH_MAN_PAGES)]
    wanted = [any(flag for flag, _, _ in later[index:]) for index in range(len(later))]
    holdout, review = holdout or wanted[0], review or wanted[0]
    if folder.exists():
        shutil.rmtree(folder)
    (folder / "zh").mkdir(parents=True)
    written: list[str] = []
    missing: list[str] = []
    jobs = ([("man", name, render_man) for name in MAN_PAGES] + [("readme", name, read_readme) for name in READMES]
            + [("pydoc", name, render_pydoc) for name in PYDOC] + [("zhman", name, render_zh_man)
                                                                   for name in ZH_MAN_PAGES])
    if holdout:
        jobs += ([("man", name, render_man) for name in HOLDOUT_MAN_PAGES]
                 + [("readme", name, read_readme) for name in HOLDOUT_READMES]
                 + [("changelog", name, read_changelog) for name in HOLDOUT_CHANGELOGS]
                 + [("zhman", name, render_zh_man) for name in HOLDOUT_ZH_MAN_PAGES])
    if review:
        jobs += [("man", name, render_man) for name in REVIEW_MAN_PAGES]
    for on, (_, man_pages, zh_pages) in zip(wanted, later, strict=True):
        if on:
            jobs += [("man", name, render_man) for name in man_pages] + [("zhman", name, render_zh_man)
                                                                           for name in zh_pages]
    for kind, name, render in jobs:
        text = render(name)
        if text is None:
            missing.append(f"{kind}:{name}")
            continue
        target = (folder / "zh" if kind == "zhman" else folder) / corpus_name(kind, name)
        target.write_text(text, encoding="utf-8")
        written.append(str(target.relative_to(folder)))
    return written, missing


if __name__ == "__main__":
    files, absent = build_corpus(Path(sys.argv[1]), holdout="--holdout" in sys.argv[2:],
                                 review="--review" in sys.argv[2:], third="--third" in sys.argv[2:],
                                 fourth="--fourth" in sys.argv[2:], fifth="--fifth" in sys.argv[2:])
    print(len(files), "files;", "missing:", absent)
