"""What a question asks for, and which sentences give it (INF-3, WF-7).

"How many …?", "which port", "what exit status" ask for an amount; "… by default?" for a default; "why …?"
for a reason; "which option …?" for an option; "how do I …?" for a way; "which one wins?" for what takes
precedence; "is there a precondition?" for what is needed. A sentence of the kind asked ranks
above one that only shares the question's words, a quote's run of sentences reaches one, and for an amount
or an option nothing quotable of that kind means no answer. Also here: which sections of a manual page can
answer (a NAME line only "what is …?", a SEE ALSO list nothing), and what a passage describing one option or
setting looks like."""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from typing import Final

from ....text.analysis import has_cjk
from ....text.passages import HEADING_SEPARATOR
from ....text.sentences import opens_with_option, option_tag
from ..tasks import (
    ExcerptPassage,
)
from .terms import (
    _CJK_SPLIT,
    _OPTION,
    CJK_GATE_STOPWORDS,
    CJK_QUESTION_WORDS,
    QUESTION_STOPWORDS,
    analyze,
    asked_sentences,
    asks_a_question,
)

__all__ = []


#: A heading of a man page's NAME or SYNOPSIS section (English, or as manpages-zh titles them).
_SYNOPSIS_SECTION = re.compile(r"^(?:NAME|SYNOPSIS)\b|^(?:名称|名字|总览|概述|语法|摘要)|\((?:NAME|SYNOPSIS)\)$")
#: A heading of a man page's one-line description of itself (NAME, 名称, "NAME(名称)").
_NAME_SECTION = re.compile(r"(?:NAME|名称|名字)(?:\W|$)|.*\((?:NAME|名称)\)$")
#: A heading of a man page's list of other pages to read (SEE ALSO, 参见).
_REFERENCE_SECTION = re.compile(r"(?:SEE\s+ALSO|参见|另见|参阅)(?:\W|$)")
#: A question that asks what a thing is ("What is jq?", "What does tee do?", "git 是什么？").
_ASKS_WHAT_IT_IS = re.compile(r"\s*(?:what\s+(?:is|are)\s+(?:an?\s+|the\s+)?[\w.+-]+|what\s+does\s+[\w.+-]+\s+do)"
                              r"\s*\??\s*$|\s*[\w.+-]+\s*是什么[？?]?\s*$", re.IGNORECASE)
#: A question that asks which option does something ("Which tar option…", "Which sqlite3 command-line option…",
#: "Which login.defs option…", "哪个选项…").
_ASKS_FOR_OPTION = re.compile(r"\b(?:which|what)\s+(?:[\w.+-]+\s+){0,2}?(?:option|flag|switch)s?\b"
                              r"|(?:哪个|哪一个|什么)(?:选项|参数)", re.IGNORECASE)
#: A question that asks for an amount: how many, how often, the smallest or default size, which port, which exit
#: status (a number), which version or year, 多少, 几 (not 好几, "several").
_ASKS_FOR_AMOUNT = re.compile(
    r"\bhow\s+(?:many|much|often|long|large|big|old|fast|high|low|small|quickly|soon|frequently)\b(?!-)"
    r"|\b(?:smallest|largest|lowest|highest|biggest|minimum|maximum|min|max|default)\s+(?:[\w-]+\s+){0,2}?"
    r"(?:size|number|value|length|level|limit|count|port|timeout|interval|amount|range)s?\b"
    r"|\b(?:what|which)\s+(?:tcp\s+|udp\s+)?port\b"
    r"|\b(?:what|which)\s+(?:[\w-]+\s+){0,2}?(?:exit|return|error)\s+(?:status|code|value)(?:es|s)?\b"
    r"|\b(?:what|which)\s+(?:[\w.+-]+\s+){0,2}?(?:version|release)s?\b|\bin\s+(?:what|which)\s+year\b"
    r"|\b(?:what|which)\s+(?:is|are|was|were)\s+the\s+(?:smallest|largest|lowest|highest|biggest|minimum|maximum|longest"
    r"|shortest)\s+[\w=.-]+"
    r"|多少|多久|多长|多大|(?<!好)几[个次天秒分钟小时]|(?:什么|哪个|哪些|哪一个)(?:退出|返回)(?:状态|码|值)"
    r"|(?:退出|返回)(?:状态码?|码|值)(?:是|为)(?:什么|多少)",
    re.IGNORECASE)
#: A question that asks whether ("Can a generated column have a DEFAULT value?", "Is there a maximum …?"): any
#: passage about it answers yes or no, whether or not it states an amount.
_ASKS_WHETHER = re.compile(r"\s*(?:can|could|does|do|did|is|are|was|were|will|would|should|may|must|has|have)\b",
                           re.IGNORECASE)


#: A question whether there is a limit ("Is there a maximum length for …?", "Is there a timeout after which …?"):
#: answered by the limit, or by "unlimited", not by any passage about the thing.
_ASKS_WHETHER_LIMITED = re.compile(r"\s*(?:is|are)\s+there\s+(?:an?|any)\s+(?:[\w-]+\s+)?"
                                   r"(?:maximum|minimum|max|min|limit|upper\s+bound|lower\s+bound|cap|timeout"
                                   r"|time\s+limit)s?\b", re.IGNORECASE)


def _asks_for_amount(question: str) -> bool:
    """Whether ``question`` asks for an amount (:data:`_ASKS_FOR_AMOUNT`, in the sentences that ask) rather than
    whether there is one; whether there is a limit asks for the limit (:data:`_ASKS_WHETHER_LIMITED`)."""
    asked = " ".join(asked_sentences(question))
    return (_ASKS_FOR_AMOUNT.search(asked) is not None and _ASKS_WHETHER.match(question) is None) or \
        _ASKS_WHETHER_LIMITED.match(question) is not None


#: An amount in a sentence: a number ("20 times", "-20", "1024 bits", "0.5"), also with its unit written on
#: ("1s", "100ms", "64k", "10kbyte", "10mbit"), not a manual section ("ssh(1)") or a bug number ("#584837"); a
#: number or a frequency in English words ("twice", "thirty", "nightly", "unlimited"; not "one", mostly a pronoun,
#: nor "one-shot": see :data:`_ONE_OR_NONE_OF`, but "one second"); a Chinese
#: numeral with its unit or a power of ten ("三十天", "两次", "一百"; not a lone 一 before a classifier, "一个",
#: which is an article), or 每天/每周. A number written against Chinese text is one ("最多14个字母长").
_STATES_AMOUNT = re.compile(
    r"(?<![#A-Za-z0-9_.])(?<![A-Za-z0-9_]\()\d+(?:(?:ms|us|µs|ns|min|sec|[smhdw]|[kKMGT]i?B|[kKMGT]"
    r"|[kKmMgG]?(?:bit|byte)s?|[kKmMgG]bps|[kKMG]?Hz)(?![\w-]))?(?![A-Za-z0-9_])"
    r"|(?<![\w-])(?:zero|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|(?:thir|four|fif|six|seven|eigh|nine)teen"
    r"|(?:twen|thir|for|fif|six|seven|eigh|nine)ty|hundreds?|thousands?|millions?|billions?|dozens?|half|double"
    r"|once|twice|thrice|hourly|daily|nightly|weekly|monthly|yearly|annually|unlimited|infinite(?:ly)?"
    r"|indefinitely|forever)(?![\w-])|(?<![\w-])(?:an?|one)\s+(?:second|minute|hour|day|week|fortnight|month|year|decade)\b"
    r"|[零〇一二两三四五六七八九]*[十百千万亿]"
    r"|(?!一[个种条份项行点位])(?<![零〇一二两三四五六七八九十百千万])[零〇一二两三四五六七八九半]+[天日周月年次个秒分时字节位行倍遍项条种份级岁号点]"
    r"|每(?:天|日|周|月|年|小时|分钟|秒)", re.IGNORECASE)
#: "no retries", "one day", "a single file": none or one of a thing, an amount when the question names it.
_ONE_OR_NONE_OF = re.compile(r"(?<![\w-])(?:no|zero|one|a\s+single|without)\s+(?:[a-z-]+\s+)?([a-z][a-z-]*)",
                             re.IGNORECASE)


#: A call written in code or in a question (``landlock_restrict_self(ruleset_fd, 0)``, ``setTimeout(fn, 100)``),
#: its arguments the group, innermost calls first.
_CALL = re.compile(r"(?<=[\w$])\(([^()]{0,200})\)")


#: How deep calls inside calls are taken apart (``f(g(h(x), 0))``); deeper ones keep their innermost arguments.
_CALL_DEPTH: Final = 8


def _without_call_arguments(text: str) -> str:
    """``text`` with the arguments of every call it writes left out: a ``0`` passed to a function states no amount."""
    for _ in range(_CALL_DEPTH):
        shorter = _CALL.sub("", text)
        if shorter == text:
            break
        text = shorter
    return text


#: A version number ("1.15.5", "2.6.32-5"): the amount asked only when the question asks for a version.
_VERSION_NUMBER = re.compile(r"(?<![\w.])v?\d+\.\d+\.\d+(?:[.~+-]\w+)*")
_ASKS_OF_A_VERSION = re.compile(r"\b(?:version|release)s?\b|版本", re.IGNORECASE)


def _amount_text(question: str, text: str) -> str:
    """``text`` as read for an amount ``question`` asks for: without its version numbers unless the question asks
    of a version ("How long may a changelog line be?" is not answered by "Since: 1.15.5")."""
    return text if _ASKS_OF_A_VERSION.search(question) else _VERSION_NUMBER.sub(" ", text)


def _states_amount(text: str, wanted: set[str], question: str) -> bool:
    """Whether ``text`` states an amount (:data:`_STATES_AMOUNT`), or none or one of a thing the question
    names ("by default curl makes no retries" answers "How many retries…"); a keyword in capitals is code, not
    an amount ("WITHOUT ROWID tables" holds no number of tables), nor is a call's argument (``f(fd, 0)``), nor a
    version number unless ``question`` asks of a version (:func:`_amount_text`)."""
    return bool(_STATES_AMOUNT.search(_without_call_arguments(_amount_text(question, text)))) or any(
        wanted.intersection(analyze(found.group(1))) for found in _ONE_OR_NONE_OF.finditer(text)
        if not found.group().split()[0].isupper())


#: A question that asks for a default: in so many words ("What is the default login shell…", "…print by default?",
#: 默认) or by what the user leaves out ("when I don't change it", "unless I tell it otherwise", "with no options at
#: all", "if I don't give cmp any skip values", "I never set submodule.<name>.branch", "if I give it a command but no
#: policy flag", "without giving it any list", "if I leave out burst", 不指定, 只给一个尾数的时候).
_ASKS_FOR_DEFAULT = re.compile(
    r"\bdefault(?:s|ed)?\b|\bout\s+of\s+the\s+box\b|\bunless\s+I\b|\botherwise\b"
    r"|\b(?:(?:when|if|unless|and)\s+(?:I|you|we)|and|but)\s+(?:\w+n['’]t|dont|do\s+not|did\s+not|have\s+not|never)\s+"
    r"(?:change|give|specify|set|pass|say|tell|provide|supply|add|configure|name|choose|pick|use)\b"
    r"|(?<![\w'’])(?:I|we)\s+(?:never|didn['’]t|did\s+not|haven['’]t|have\s+not|have\s+never)\s+"
    r"(?:set|specified|specify|configured|configure|changed|change|given|give|passed|pass|supplied|supply)\b"
    r"|\b(?:without|with\s+no)\s+(?:any\s+)?(?:options?|arguments?|flags?|settings?|values?|switch(?:es)?|parameters?)\b"
    r"|\b(?:left|leave\s+it)\s+(?:unset|out|empty|blank|alone)\b|\b(?:leaves?|leaving)\s+out\b|\bomit(?:ted|ting)?\b"
    r"|\b(?:without|with\s+no)\s+(?:the\s+|an?\s+|any\s+)?-{1,2}[\w-]+"
    r"|\b(?:is|are|was)\s+(?:not|never)\s+(?:given|specified|set|passed|supplied)\b"
    r"|\bif\b[^,?]{0,80}?\b(?:but|has|have|with)\s+no\b"
    r"|\bwithout\s+(?:giving|passing|specifying|setting|naming|choosing|picking|supplying|providing)\b"
    r"|默认|缺省|不指定|未指定|没有指定|没指定|不给|没给|只给|不加|不带|省略", re.IGNORECASE)
#: A sentence that states a default: "Defaults to /bin/bash.", "Default 16", "(zero by default)", 默认为, or what
#: happens when something is left out ("With no OPTION, same as -s.", "If no file is given…", "If none are
#: specified on the command line, read them from standard input.", 如果没有指定); not a mention of one that says none
#: ("Set a specific line speed, other than the default.").
_STATES_DEFAULT = re.compile(
    r"(?<!than\sthe\s)(?<!from\sthe\s)(?<!override\sthe\s)(?<!overrides\sthe\s)(?<!change\sthe\s)"
    r"(?<!changes\sthe\s)\bdefault(?:s|ed)?\b|\b(?:with|if|when)\s+(?:no|none)\b|\bwithout\s+(?:an?\s+|any\s+)?[A-Z]{2,}\b|\bunless\b"
    r"|\bomitted\b|\bnot\s+(?:given|specified|set)\b|\bnormally\b"
    r"|默认|缺省|如果没有|若没有|未指定|没有指定|不指定|省略|(?:如果|若|当)(?:不|没有|未)(?:使用|加|带|给出?|提供)|没有参数|无参数"
    r"|不带参数", re.IGNORECASE)
#: What tells a default, for whether a page gives one at all: :data:`_STATES_DEFAULT`, or what happens otherwise or
#: what an option does instead of ("print the first NUM lines instead of the first 10").
_TELLS_DEFAULT = re.compile(_STATES_DEFAULT.pattern + r"|\botherwise\b|\binstead\s+of\b", re.IGNORECASE)
#: What completes a run for a question that asks for a default: a sentence stating one, or one that opens with
#: "Otherwise" after the case the question leaves out ("If FILE is specified, read it …  Otherwise, a precompiled
#: database is used.").
_COMPLETES_DEFAULT = re.compile(_STATES_DEFAULT.pattern + r"|(?-i:\bOtherwise\b)", re.IGNORECASE)


#: A question that asks for a file or a place: which file, directory or path ("Which file lists the users …?", not
#: "which file attributes"), where a file, a log, an output is ("Where does pmap -n write the configuration file?";
#: "Where are backups kept?" may be answered by "on the NAS"), 哪个目录, 哪里.
_ASKS_FOR_A_FILE = re.compile(
    r"\b(?:which|what)\s+(?:[\w.-]+\s+){0,2}?(?:files?|director(?:y|ies)|folders?|path(?:name)?s?)\b"
    r"(?!\s+(?:attribute|system|type|descriptor|permission|mode|size|format|content|owner)s?\b)"
    r"|\bwhere\s+(?:does|do|is|are|will|should|did)\b[^?]*\b(?:files?|logs?|output|config(?:uration)?|dump|recording"
    r"|socket|cache|database|director(?:y|ies)|folder)\b"
    r"|\bwhere\s+(?:can|should|do|must|would|could)\s+(?:I|we|you|one)\s+(?:put|place|store|install|copy|keep|drop"
    r"|save|find)\b"
    r"|(?:哪个|什么)(?:目录|文件|路径)|哪里|哪儿|放在哪", re.IGNORECASE)
#: A sentence that names a file or a place: a path ("/etc/sudoers", "~/.plan", "$HOME/x", after a space, a quote,
#: a bracket or a Chinese character), a file's name ("screen.dump", ".pgpass"), "the file typescript", the current,
#: working or home directory, standard input or output (标准输入).
_STATES_A_PATH = re.compile(
    r"(?:^|[\s\"'`(\[<=:,\u4e00-\u9fff])(?:~|\$\{?\w+\}?|\.{1,2})?/[\w.*?-]"
    r"|(?<![A-Za-z0-9_.-])[a-z][\w-]+\.[a-z]{2,5}(?![A-Za-z0-9_])"
    r"|(?<![\w/])\.[a-z][\w.-]+|\b(?:current|working|home)\s+directory\b|\bthe\s+file\s+[\w.-]+"
    r"|\bstandard\s+(?:input|output|error)\b|\bstd(?:in|out|err)\b|当前目录|工作目录|主目录|标准(?:输入|输出|错误)",
    re.IGNORECASE)


#: A question that asks for a permission mode ("What permissions does its root directory get?", "What file permission
#: bits …?", 什么权限).
_ASKS_FOR_A_MODE = re.compile(
    r"\b(?:what|which)\s+(?:[\w-]+\s+){0,3}?(?:permissions?|permission\s+bits|mode|umask)\b"
    r"|\bpermissions?\b[^?]*\b(?:get|gets|give|gives|have|has|set)\b|什么权限|权限是", re.IGNORECASE)
#: A sentence that states a permission mode: octal ("0755", "600"), symbolic ("rwxr-xr-x", "u+w"), or in words
#: ("not world writable", "readable only by root").
_STATES_A_MODE = re.compile(
    r"(?<![\w.])0?[0-7]{3,4}(?!\w|\.\d)|\b[r-][w-][xsStT-][r-][w-][xsStT-][r-][w-][xsStT-]\b|\bu[+=-][rwx]"
    r"|\b(?:world|group|other|everyone)[- ](?:writ|read)\w*"
    r"|\b(?:readable|writable|writeable|executable)\s+(?:only\s+)?by\b|\bumask\b", re.IGNORECASE)


#: A question that asks for an environment variable ("Which environment variable turns on …?", 哪个环境变量).
_ASKS_FOR_A_VARIABLE = re.compile(r"\b(?:which|what)\s+(?:[\w-]+\s+){0,2}?(?:environment\s+)?variables?\b"
                                  r"|(?:哪个|什么)环境变量", re.IGNORECASE)
#: A sentence that names one: ``XZ_DEFAULTS``, ``HOME``, ``PS1``, ``$PAGER``; not a three-letter acronym ("the GNU
#: Privacy Guard", "a PPA", "the URL"), which manuals write far more often than a variable that short.
_NAMES_A_VARIABLE = re.compile(r"(?<![\w-])[A-Z][A-Z0-9]*_[A-Z0-9_]+\b|(?<![\w-])(?:[A-Z]{4,}[0-9]*|[A-Z]{3}[0-9]+)\b"
                               r"|\$\{?[A-Za-z_]\w*")
#: A question that asks for a signal ("Which signal does pkill send …?", 哪个信号).
_ASKS_FOR_A_SIGNAL = re.compile(r"\b(?:which|what)\s+(?:[\w-]+\s+){0,2}?signals?\b|(?:哪个|什么)信号", re.IGNORECASE)
#: A sentence that names one: ``SIGTERM``, ``TERM``, ``HUP``, "signal 15", ``-9``.
_NAMES_A_SIGNAL = re.compile(r"\bSIG[A-Z0-9]+\b|\b(?:TERM|KILL|HUP|INT|QUIT|USR1|USR2|STOP|CONT|ALRM|CHLD|PIPE)\b"
                             r"|\bsignal\s+\d+|(?<![\w-])-\d+\b")

#: A question that asks for an algorithm ("Which hash algorithm does pathchk use?", 什么算法).
_ASKS_FOR_AN_ALGORITHM = re.compile(r"\b(?:which|what)\s+(?:[\w-]+\s+){0,2}?(?:algorithm|cipher|hash)s?\b"
                                    r"|(?:哪种|哪个|什么)(?:[\u4e00-\u9fff]{0,4})?(?:算法|加密方式)", re.IGNORECASE)
#: A sentence that names one: the word itself ("the BLAKE2 algorithm", a setting's ``HMAC_CRYPTO_ALGO``, 算法), or a
#: common one by name (SHA-512, MD5, CRC32, AES256, yescrypt, LZMA2, zstd, deflate, Burrows-Wheeler).
_NAMES_AN_ALGORITHM = re.compile(
    r"algo|hmac|算法|\b(?:sha-?\d*|md[245]|blake2\w*|crc-?\d*|adler-?32|aes-?\d*|des|3des|chacha20\w*|rsa|dsa"
    r"|ecdsa|ed25519|bcrypt|scrypt|yescrypt|argon2\w*|pbkdf2|lzma2?|lz4|lzo|zstd|deflate|gzip|bzip2|xz|huffman"
    r"|burrows-wheeler|fisher-yates|mersenne)\b", re.IGNORECASE)

#: A question for who made something ("Who wrote systemd-cgtop?", 谁开发的): not "Who can use at?".
_ASKS_WHO_MADE = re.compile(
    r"\bwho\s+(?:originally\s+)?(?:wrote|writes|maintains|maintained|developed|develops|created|designed|made|"
    r"authored|is\s+the\s+(?:author|maintainer))\b|谁(?:写|开发|维护|编写|创建|设计)|作者是谁", re.IGNORECASE)
#: A sentence that says who: "written by", "the author", "maintained by", an address (``<card@masi.ibp.fr>``), 作者.
_NAMES_A_MAKER = re.compile(
    r"\b(?:written|developed|created|maintained|designed|authored|contributed)\s+(?:\w+\s+)?by\b|\bauthors?\b"
    r"|\bmaintainers?\b|\bcopyright\b|©|<[^@\s<>]+@[^@\s<>]+>|作者|维护者?|编写|开发者", re.IGNORECASE)

#: A question for a network port ("Which port does git daemon listen on by default?", 默认的控制端口号是多少): not a
#: serial, parallel or USB port.
_ASKS_FOR_A_PORT = re.compile(
    r"^(?!.*(?:\b(?:serial|parallel|usb|tty)\b|串口|并口|串行)).*?(?:\b(?:which|what)\s+(?:[\w-]+\s+){0,2}?ports?\b"
    r"|\bport\s+number\b|(?:哪个|什么|哪一个)端口|端口号?(?:是|为)?多少)", re.IGNORECASE | re.DOTALL)
#: A sentence that states one: "port 5432", "that port (22 by default)", "listens on 22", "5432/tcp",
#: "example.com:4242", "the default port for the scheme is used (389 for ldap://…)", 端口 21, 端口 (默认是 3690).
_STATES_A_PORT = re.compile(
    r"\bports?\b[\s(]{1,3}(?:[a-z]+\s+){0,3}?\(?\d{1,5}\b|\b\d{1,5}/(?:tcp|udp)\b|(?<![\w.])[\w.-]+:\d{2,5}\b"
    r"|\bports?\b[^.;!?]{0,60}?\s\(\d{1,5}\b"
    r"|\b(?:listen|run|bind|connect|serve)(?:s|ed|ing)?\s+(?:on|to)\s+\d{1,5}\b"
    r"|端口号?\s*[(（]?\s*(?:默认|缺省)?\s*(?:是|为)?\s*\d{1,5}|\d{1,5}\s*(?:号)?端口", re.IGNORECASE)

#: A question for the version or release something came, went or changed in ("Which version of systemd first
#: shipped systemd-cgtop?", "Since which dpkg release …?", 哪个版本 … 移除).
_ASKS_FOR_A_VERSION = re.compile(
    r"\b(?:since|from|in)\s+(?:which|what)\s+(?:[\w-]+\s+){0,2}?(?:version|release)s?\b"
    r"|\b(?:which|what)\s+(?:[\w-]+\s+){0,2}?(?:version|release)s?\b.*\b(?:first|added|introduced|shipped|"
    r"appeared|removed|dropped|deprecated|became|supported|accepted)\b"
    r"|(?:哪个|哪一|什么)版本.*(?:加入|引入|移除|删除|支持|开始|出现)", re.IGNORECASE | re.DOTALL)
#: A sentence that states one: "2.36", "version 3", "since dpkg 1.16.1", "with systemd 44", "Linux 4.8", 版本 2.
_STATES_A_VERSION = re.compile(
    r"\bv?\d+\.\d+(?:\.\d+)*\b|\b(?:version|release)\s+v?\d+|\bsince\s+(?:[\w-]+\s+){0,2}v?\d+"
    r"|\b(?:with|in|from)\s+[\w-]+\s+v?\d+\b|版本\s*v?\d",
    re.IGNORECASE)


def _asks(question: str, kind: re.Pattern[str]) -> bool:
    """Whether ``question`` asks for ``kind`` of answer, not why, nor whether ("Does rm remove directories by
    default?" is answered yes or no)."""
    return (asks_a_question(question) and kind.search(question) is not None and _ASKS_WHY.search(question) is None
            and _ASKS_WHETHER.match(question) is None)


#: What a question asks for, and how a sentence that gives it reads: a question of such a kind is not answered by a
#: page that only shares its words.
#:
#: * a default ("Which objects does sotruss trace by default?", "without -c, what chunk size …?") is told
#:   (:data:`_TELLS_DEFAULT`): a page that describes -F and -T does not say what happens without them;
#: * a file or a place ("Which file lists the users …?", "Where does pmap -n write the configuration file?",
#:   从哪个目录) is named (:data:`_STATES_A_PATH`);
#: * a permission mode is stated (:data:`_STATES_A_MODE`): "Set initial permissions of the root directory." gives
#:   none;
#: * an environment variable, a signal or an algorithm is named (:data:`_NAMES_A_VARIABLE`, :data:`_NAMES_A_SIGNAL`,
#:   :data:`_NAMES_AN_ALGORITHM`): "Diagnose invalid or unportable file names." names no hash pathchk uses.
_STATEMENTS_ASKED: Final = ((_ASKS_FOR_DEFAULT, _TELLS_DEFAULT), (_ASKS_FOR_A_FILE, _STATES_A_PATH),
                           (_ASKS_FOR_A_MODE, _STATES_A_MODE), (_ASKS_FOR_A_VARIABLE, _NAMES_A_VARIABLE),
                           (_ASKS_FOR_A_SIGNAL, _NAMES_A_SIGNAL), (_ASKS_FOR_AN_ALGORITHM, _NAMES_AN_ALGORITHM),
                           (_ASKS_WHO_MADE, _NAMES_A_MAKER), (_ASKS_FOR_A_PORT, _STATES_A_PORT),
                           (_ASKS_FOR_A_VERSION, _STATES_A_VERSION))


def _statements_asked(question: str) -> list[re.Pattern[str]]:
    """The patterns (:data:`_STATEMENTS_ASKED`) one of which a sentence that answers ``question`` must match."""
    return [statement for kind, statement in _STATEMENTS_ASKED if _asks(question, kind)]


#: A sentence that only finishes the one before: a manual's "Defaults to /home." or "Default 16 (-i: 12)."
#: after the description of what it is the default of.
_CONTINUES = re.compile(r"\s*Defaults?\b(?!\s*:)")

#: A question that asks what to use instead ("what am I supposed to use instead?", 手册建议改用什么命令).
_ASKS_FOR_REPLACEMENT = re.compile(
    r"\binstead\b|\brather\s+than\b|\breplace(?:ment|d)?\b|改用|代替|替代|取代|换成|而非", re.IGNORECASE)
#: What names a replacement: "use sort -u rather than uniq", "superseded by", "in favour of", 而非, 改用.
_GIVES_REPLACEMENT = re.compile(
    r"\binstead\b|\brather\s+than\b|\breplac(?:e|es|ed|ing|ement)\b|\bsupersed(?:e|es|ed|ing)\b"
    r"|\bin\s+favou?r\s+of\b|\bprefer(?:red|ably)?\b|改用|代替|替代|取代|换成|而非|而不是|请使用|应使用", re.IGNORECASE)
#: A question that asks which of two settings wins ("LESS is exported, and my lesskey file sets it too: which one
#: does less actually use?", "which takes precedence?", "are both of them applied?", 哪个优先).
_ASKS_WHICH_WINS = re.compile(
    r"\bwhich\s+(?:one|of\s+(?:them|the\s+two|these|those|both))\b.{0,60}?\b(?:use[sd]?|wins?|appl(?:y|ies)"
    r"|takes?\s+effect|prevails?|counts?|honou?rs?|respects?|obeys?|gets?\s+used|decides?|matters?"
    r"|(?:is|gets)\s+(?:used|applied|honou?red|read))\b"
    r"|\b(?:takes?|has|have|gets?)\s+(?:precedence|priority)\b|\boverrides?\b|\bwhich\s+(?:\w+\s+){0,2}?wins\b"
    r"|\bboth\b.{0,60}?\b(?:applied|used|read|loaded|honou?red|processed)\b"
    r"|哪个优先|谁优先|优先级|哪个生效|以哪个为准", re.IGNORECASE | re.DOTALL)
#: What says which wins: "the value in the lesskey file takes precedence", "overrides", "is preferred over", "any file
#: of the same name in subsequent directories is ignored", 优先.
_GIVES_PRECEDENCE = re.compile(
    r"\b(?:takes?|has|have|given|gets?)\s+(?:\w+\s+)?(?:precedence|priority)\b|\bprecede[sd]?\b|\boverrid(?:es|den)\b|\bwins\b"
    r"|\bin\s+preference\s+to\b|\bpreferred\s+(?:over|to)\b|\bsupersed(?:e|es|ed|ing)\b|\btakes?\s+effect\b|\bignored\b"
    r"|优先|覆盖|为准", re.IGNORECASE)
#: A question that asks what something needs first ("Can netem mark ECN instead of dropping, and is there any
#: precondition?", "What am I missing?", 有什么前提).
_ASKS_FOR_A_CONDITION = re.compile(
    r"\b(?:pre)?conditions?\b|\bprerequisites?\b|\brequirements?\b|\bwhat\s+am\s+I\s+missing\b"
    r"|\bwhat(?:'s|\s+is)\s+missing\b|\bwhat\s+(?:else\s+)?(?:do|does|must|should)\s+(?:I|we|you|it)\s+need\b"
    r"|\bwhat\s+(?:else\s+)?is\s+(?:needed|required)\b|\bdoes\s+(?:it|that|this)\s+(?:require|need)\b"
    r"|前提|先决条件|需要满足", re.IGNORECASE)
#: What gives one: "A loss model has to be used for this to be enabled.", "must", "requires", "only if", 必须.
_GIVES_CONDITION = re.compile(
    r"\b(?:has|have)\s+to\s+be\b|\bmust\b|\brequire[sd]?\b|\brequirements?\b|\bneeds?\s+to\b"
    r"|\bonly\s+(?:if|when|after|with|works|applies|available|possible|effective|valid)\b|\bprerequisites?\b"
    r"|\bprovided\s+that\b|\bin\s+order\s+for\b|必须|前提|只有|才能", re.IGNORECASE)
#: A question whether something is allowed: "Can I put `update = !cmd` in .gitmodules?", "Is it allowed to …?",
#: "Am I allowed …?", 能不能, 可不可以, 是否允许.
_ASKS_IF_ALLOWED = re.compile(
    r"\s*(?:can|may)\s+(?:I|we|you|one)\b|\s*(?:is|are)\s+(?:it|they)\s+(?:allowed|permitted|possible|legal|valid)\b"
    r"|\s*(?:am|are)\s+(?:I|we)\s+allowed\b|.*(?:能不能|可不可以|是否允许|是否可以)", re.IGNORECASE)
#: What says whether it is: "the !command form is not accepted here", "is not allowed", "is ignored", 不允许.
_SAYS_IF_ALLOWED = re.compile(
    r"\b(?:not\s+)?(?:accepted|allowed|permitted|supported|forbidden|prohibited|refused|rejected|disallowed|ignored"
    r"|honou?red|respected)\b|\b(?:cannot|can\s*not|can['’]t|must\s+not|may\s+not|never)\s+be\b"
    r"|不允许|允许|禁止|不支持|支持|忽略|不能", re.IGNORECASE)
#: A question that asks why, or what causes something ("What typically causes a 'connection reset' error?").
_ASKS_WHY = re.compile(r"^\s*why\b|\bwhy\s+(?:do|does|did|is|are|was|were|can|can't|cannot|would|should|had|has)\b"
                       r"|\bwhat\s+(?:\w+\s+){0,2}caus(?:es|ed|e)\b|为什么|为何|何故|什么原因|原因是", re.IGNORECASE)
#: What gives a reason: "because", "since", "as this causes", "to ease upgrades", 因为, 为了.
_GIVES_REASON = re.compile(
    r"\b(?:because|since|due\s+to|owing\s+to|so\s+that|in\s+order\s+to|reasons?|results?\s+from|caused\s+by"
    r"|depends\s+on"
    r"|as\s+(?:this|it|they|that|these|those|the|there|we|you)"
    r"|to\s+(?:avoid|ease|allow|prevent|make|ensure|keep|support|fix|work\s+around))\b"
    r"|因为|由于|为了|所以|因此|否则|以免|以便", re.IGNORECASE)
#: A question that asks for a way to do something: "How do I stop losetup from …?", "how can I …", 怎样, 如何.
_ASKS_HOW_TO = re.compile(r"\bhow\s+(?:do|can|could|should|would)\s+(?:I|you|we|one)\b|\bhow\s+to\b"
                          r"|怎样|怎么|如何|有什么办法|什么方法|(?:需要|要|该|应该)做(?:什么|哪些)", re.IGNORECASE)
#: A question that asks for the command, setting or line to use ("What command fixes that?", "Which setting switches
#: that on?", "What can I put in ~/.ssh/config …?"): as a how-to question, what answers it is often a block under a
#: lead-in that says what it is for.
_ASKS_FOR_AN_INSTRUCTION = re.compile(
    r"\b(?:what|which)(?:'s|\s+is|\s+are)?\s+(?:the\s+|a\s+)?(?:(?!(?:do|does|did|is|are|was)\b)[\w-]+\s+)?"
    r"(?:commands?|settings?|directives?|invocation|config(?:uration)?\s+lines?)\b(?!-)"
    r"|\bwhat\s+(?:can|should|do|must)\s+(?:I|we|you)\s+(?:put|add|write|type|run|enter)\b"
    r"|什么命令|哪个命令|哪条命令|什么设置|哪个设置", re.IGNORECASE)
#: What gives a way: an instruction ("Use --nooverlap with --find …", "Set … to …"), what you can or should do,
#: what avoids or solves a problem ("Employing the -ttt option … should solve the problem."); 可以, 使用, 设置.
_GIVES_WAY = re.compile(
    r"(?:^|[.!?]\s+|\n\s*)(?:use|set|run|add|pass|give|specify|put|edit|create|call|type|enable|disable|install"
    r"|remove|delete|change|select|invoke|append|prefix|press|try)\b"
    r"|\b(?:you|one|users?|applications?|programs?|programmers?|developers?|callers?|administrators?)\s+"
    r"(?:can|may|should|must|need\s+to|have\s+to)\b|\bto\s+(?:avoid|prevent|stop|disable|guard\s+against)\b"
    r"|\bby\s+(?:using|setting|passing|adding|giving|running|specifying|(?:the\s+)?use\s+of)\b"
    r"|\b(?:can|could|may)\s+(?:\w+\s+)?be\s+(?:\w+\s+)?(?:avoided|alleviated|prevented|fixed|solved|worked\s+around)\b"
    r"|\b(?:should|will|would|can|may)\s+(?:\w+\s+)?(?:solve|fix|avoid|prevent|resolve)\s+(?:the|this|that|these)\b"
    r"|可以|使用|设置|设立|指定|应该|必须|建议|最好|比较方便|会方便|更方便", re.IGNORECASE)
#: An option the question says is *not* given ("when I don't pass -n", "without -k", "不加 -n").
_NEGATED_OPTION = re.compile(r"(?:\b(?:\w+n['’]t|dont|do\s+not|not|without|no|never|omit|leave\s+off|unless)\s+"
                             r"(?:\w+\s+){0,2}?|(?:不加|不用|不带|没有加?|不指定)\s*)--?[A-Za-z0-9][A-Za-z0-9-]*",
                             re.IGNORECASE)


def _section(context: str | None) -> str:
    """The last heading of a passage's heading path: the section it is in ("NAME", "SEE ALSO", "-r, --remove")."""
    return (context or "").rsplit(HEADING_SEPARATOR, 1)[-1].strip()


def _answering_sections(question: str, passages: Sequence[ExcerptPassage]) -> list[bool]:
    """Whether each passage's section can answer ``question``. A man page's NAME and SYNOPSIS lines share the
    command's name with every question about it and answer only "What is split?"; its SEE ALSO list (参见) names
    other pages and answers nothing: quoted, they read as an answer that says nothing."""
    what_is = _ASKS_WHAT_IT_IS.match(question) is not None
    return [not _REFERENCE_SECTION.match(section) and (what_is or not _SYNOPSIS_SECTION.search(section))
            for section in (_section(passage.context) for passage in passages)]


def _named_options(question: str) -> set[str]:
    """The options ``question`` names as given (``-G`` of "usermod -G kicked me out"), not those it says are left
    out ("when I don't pass -n")."""
    return set(_OPTION.findall(_NEGATED_OPTION.sub(" ", question)))


#: What an amount question measures: "how many *days*", "the maximum number of *OnCalendar= expressions*", "the
#: smallest RSA *key length*", "what *exit status*". Not a port: "It listens on 22." says which without the word.
_MEASURE = re.compile(
    r"\bhow\s+many\s+(?P<many>[\w=.-]+(?:\s+[\w=.-]+)?)"
    r"|\b(?:number|count)\s+of\s+(?P<of>[\w=.-]+(?:\s+[\w=.-]+)?)"
    r"|\b(?:smallest|largest|lowest|highest|biggest|minimum|maximum|min|max|default)\s+(?P<noun>(?:[\w-]+\s+){0,2}?"
    r"(?:size|length|level|limit|timeout|interval|amount|range))s?\b"
    r"|\b(?:is|are|was|were)\s+the\s+(?:smallest|largest|lowest|highest|biggest|minimum|maximum|longest|shortest)\s+"
    r"(?!(?:number|count|amount)\b)(?P<most>[\w=.-]+)"
    r"|\b(?P<status>exit|return|error)\s+(?:status|code|value)", re.IGNORECASE)
#: The words a sentence giving an exit status uses.
_STATUS_WORDS: Final = frozenset(analyze("exit exits status return returns code error"))
#: An exit status stated in so many words: "exits with status 2", "returns 1", "exit code of 64", "The exit status
#: returned by fallocate is 0".
_STATES_A_STATUS = re.compile(
    r"\b(?:exit|return)(?:s|ed)?\s+(?:with\s+)?(?:an?\s+)?(?:(?:exit|error|non-?zero)\s+)?(?:status|code|value)?\s*"
    r"(?:of\s+)?-?\d+|\b(?:status|code|value)\s+(?:is\s+|of\s+|=\s*|to\s+)?-?\d+"
    r"|\b(?:status|code|value)\b[^.;]{0,40}?\b(?:is|are|be)\s+-?\d+"
    r"|(?:返回|退出)(?:状态|码|值)?[^。；]{0,12}?(?:为|是|返回)?\s*-?\d+", re.IGNORECASE)
#: A Chinese question for an exit status (退出状态, 返回值, 退出码).
_ASKS_FOR_A_CJK_STATUS = re.compile(r"(?:退出|返回)(?:状态|码|值)")
#: A section of exit statuses: EXIT STATUS, RETURN VALUE, DIAGNOSTICS, 退出状态, 返回值.
_STATUS_SECTION = re.compile(r"exit|return|status|diagnos|退出|返回", re.IGNORECASE)


def _asks_for_a_status(question: str) -> bool:
    """Whether ``question`` asks for an exit status ("What exit code should it expect?", 退出状态是多少)."""
    return _asks_for_amount(question) and (_measured(question) == _STATUS_WORDS
                                           or _ASKS_FOR_A_CJK_STATUS.search(question) is not None)


def _in_status_section(passage: ExcerptPassage) -> bool:
    """Whether ``passage`` sits in a section of exit statuses (its innermost heading, :data:`_STATUS_SECTION`)."""
    return _STATUS_SECTION.search(_section(passage.context)) is not None


def _states_a_status(passage: ExcerptPassage, text: str) -> bool:
    """Whether ``text`` of ``passage`` gives an exit status: it sits in a section of exit statuses (the innermost
    heading, :data:`_STATUS_SECTION`), says one in so many words (:data:`_STATES_A_STATUS`), or is the entry of a
    number that can be one (ischroot(1)'s "2      if the detection is not possible", under DESCRIPTION)."""
    value = _VALUE_ENTRY.match(passage.text)
    return _in_status_section(passage) or _STATES_A_STATUS.search(text) is not None \
        or (value is not None and int(value.group(1)) <= _HIGHEST_STATUS)


#: A question for a limit: the longest, the largest, at most, at least, 最多, 至少, 上限.
_ASKS_FOR_A_LIMIT = re.compile(
    r"\b(?:maximum|minimum|max|min|longest|largest|smallest|shortest|highest|lowest|limits?)\b|\bat\s+(?:most|least)\b"
    r"|最多|最少|最大|最小|最长|最短|至少|上限|下限", re.IGNORECASE)
#: A sentence that states a limit: in the words a question asks for one with (:data:`_ASKS_FOR_A_LIMIT`), as a bound
#: ("up to", "no more than", "must not exceed", "between", "unlimited") or a timeout (a limit of time:
#: "在 60 秒后超时").
_STATES_A_LIMIT = re.compile(
    _ASKS_FOR_A_LIMIT.pattern + r"|\b(?:maximal|minimal|limited|up\s+to|no\s+(?:more|less|fewer)\s+than"
    r"|(?:more|less|fewer|smaller|larger|greater|bigger|longer|shorter)\s+than|exceed\w*|range|between|unlimited"
    r"|infinite|time(?:s|d)?\s*out|timeout)\b|超过|超时|逾时|不得|不能|范围|之间|无限", re.IGNORECASE)
#: A question for how long something waits, keeps or lasts ("How long does apt-cdrom add wait for the disc?", "how
#: long does git wait before pruning …", "How long are entries kept …"): a duration, not a length ("how long is
#: it", "how long can a comment be").
_ASKS_FOR_A_DURATION = re.compile(
    r"\bhow\s+long\s+(?:until|before|(?:[\w'`.-]+\s+){0,8}?(?:waits?|keeps?|kept|takes?|lasts?|stays?|remains?|retains?"
    r"|retained|sleeps?|blocks?|lingers?|persists?|pauses?)\b)", re.IGNORECASE)
#: A word that asks: a question with more than one asks more than one thing.
_QUESTION_WORD = re.compile(r"\b(?:when|who|whom|whose|where|what|which|why|how)\b", re.IGNORECASE)


def _asks_for_a_duration(question: str) -> bool:
    """Whether ``question`` asks only how long something waits, keeps or lasts (:data:`_ASKS_FOR_A_DURATION`): a
    question that also asks something else ("When does the export run, how long is it kept and who owns it?") is
    answered in parts, each by a passage of its own."""
    return _ASKS_FOR_A_DURATION.search(question) is not None and len(_QUESTION_WORD.findall(question)) == 1


#: A sentence that states one: a number with a unit of time ("5 seconds", "90 days", "100ms"), a unit of time
#: ("in tens of seconds"), or "forever", "indefinitely", "never", "until …"; not any number ("old Debian 1.1/1.2
#: discs … takes much longer to scan").
_STATES_A_DURATION = re.compile(
    r"\d\s*(?:ms|us|µs|ns|s|u?secs?|(?:micro|milli|nano)?seconds?|mins?|minutes?|h|hrs?|hours?|days?|weeks?|months?"
    r"|years?)\b|\b(?:(?:micro|milli|nano)?seconds?|minutes?|hours?|days?|weeks?|months?|years?|forever|indefinitely"
    r"|never|until)\b", re.IGNORECASE)
#: What counts occurrences, not a thing: an amount of them is stated in any words.
_OCCURRENCES: Final = frozenset(analyze("times time"))


def _measured(question: str) -> set[str]:
    """The terms of what ``question``'s amounts measure (:data:`_MEASURE`), or an empty set when it does not say
    ("how long", "how often", 多少) or counts only occurrences ("how many times")."""
    measured: set[str] = set()
    for match in _MEASURE.finditer(question):
        if match.group("status"):
            measured |= _STATUS_WORDS
            continue
        terms = set(analyze(next(group for group in match.groups() if group))) - QUESTION_STOPWORDS
        if terms & _OCCURRENCES:
            return set()  # "how many times" is answered by "only one instance …" as well as by "3 times"
        measured |= terms
    return measured


#: What a Chinese question counts (几秒, 多少个字符, 多少字节, 几个月): a unit a page writes as the question does, or
#: the thing after 个. Not columns or digits (多少列, 几位): a page gives those as a width or a length (宽度, 长度).
_CJK_MEASURE = re.compile(r"(?:几|多少)(?:个([\u4e00-\u9fff]{1,2})"
                          r"|(毫秒|微秒|分钟|小时|字节|字符|秒|天|周|月|年|次|行|项|页|块|条))")


def _measured_cjk(question: str) -> set[str]:
    """The units and things a Chinese ``question`` counts (:data:`_CJK_MEASURE`), as written: a passage that gives
    their amount writes them ("最长可以有多少个字符" is answered by "… 256 个字符"), whatever else it counts."""
    return {next(group for group in match.groups() if group) for match in _CJK_MEASURE.finditer(question)}


#: A setting's name as a heading or a tag line: ``NAutoVTs=``, ``PermitRootLogin``, ``LOGIN_RETRIES (number)``.
_SETTING_TAG = re.compile(r"[A-Za-z_][\w.-]*=?(?:\s*\([^()]{1,30}\))?")
#: The longest first line read as a tag over an indented body.
_MAX_TAG_LINE: Final = 60
#: The most words a tag line has (``HandleLidSwitch=, HandleLidSwitchExternalPower=`` is two).
_MAX_TAG_WORDS: Final = 6
#: A sentence's end inside a line (". ", "; ") or Chinese punctuation: a line holding one is no tag.
_SENTENCE_MARK = re.compile(r"[.;:!?]\s|[。；：！？，、]")


def _describes_an_option(passage: ExcerptPassage) -> bool:
    """Whether ``passage`` is what a manual says of one option or setting: it opens with a command-line option
    (``-r, --remove``), or with a short tag line over an indented body (``PermitRootLogin``, ``NAutoVTs=``), or
    its heading is such a tag (a setting's name over its description)."""
    if opens_with_option(passage.text.lstrip().partition("\n")[0].strip()) or _opens_with_tag_line(passage.text):
        return True
    heading = _section(passage.context)
    # A section's name (DESCRIPTION, OPTIONS) is no setting's: a setting is written in mixed case, or with "_",
    # "=" or its type.
    return opens_with_option(heading) or (bool(_SETTING_TAG.fullmatch(heading)) and (
        heading != heading.upper() or any(mark in heading for mark in "_=(")))


def _tag_terms(text: str) -> set[str]:
    """The analysed terms of ``text`` with a setting's ``=`` and ``:`` read as spaces (``IdleActionSec=``)."""
    return set(analyze(text)) | set(analyze(text.replace("=", " ").replace(":", " ")))


def _entry_of_another(passage: ExcerptPassage, asked: set[str]) -> bool:
    """Whether ``passage`` is an option's or a setting's entry (:func:`_describes_an_option`) whose tag the question
    (``asked``: its :func:`_tag_terms`) does not write: logind.conf's "InhibitDelayMaxSec= … Defaults to 5." is
    about InhibitDelayMaxSec=, whatever its neighbours say, when the question asks about IdleActionSec=. The tag is
    the entry's first line, or its heading when the entry sits under one."""
    if not _describes_an_option(passage):
        return False
    first = passage.text.lstrip().partition("\n")[0].strip()
    tag = first.split(None, 1)[0] if opens_with_option(first) or _opens_with_tag_line(passage.text) else \
        _section(passage.context)
    return asked.isdisjoint(_tag_terms(tag))


def _opens_option_entry(text: str) -> bool:
    """Whether ``text`` opens with a command-line option's entry: its tag on a line of its own (``-k, --keep``
    over its description), or the tag and the description's first words on one line, the rest indented under it
    (pidof's "-d sep Tells pidof to use sep as an output separator …" over "default separator is a space.")."""
    first, _, rest = text.lstrip().partition("\n")
    return option_tag(first) or (opens_with_option(first) and rest[:1] in (" ", "\t"))


def _opens_with_tag_line(text: str) -> bool:
    """Whether ``text`` opens with a short tag line over an indented body: a definition list's term
    (``PermitRootLogin``, ``NAutoVTs=``, rtcwake's mode ``off``) over what it means. A term is a few words and
    no sentence: the first line of a hard-wrapped paragraph ("frob 读取每个文件…。默认情况下，…；如果指定") is
    followed by indented lines too."""
    first, _, rest = text.lstrip().partition("\n")
    first = first.strip()
    return bool(first) and len(first) <= _MAX_TAG_LINE and first[-1] not in ".;:!?," and rest[:1] in (" ", "\t") \
        and len(first.split()) <= _MAX_TAG_WORDS and _SENTENCE_MARK.search(first) is None


#: An entry of a list of values that opens with its number, on its line or before two spaces: an exit status's
#: ("101    Action not allowed.  The requested action …", "1" over "label or uuid cannot be found").
_VALUE_ENTRY = re.compile(r"\s*(\d{1,5})(?:[ \t]{2,}\S|[ \t]*\n[ \t]+\S)")
#: The highest exit status a process can return.
_HIGHEST_STATUS: Final = 255
#: A question that names an exit status it got: "it returned 101", "exits with status 2", "error code 9".
_NAMES_A_STATUS = re.compile(
    r"\b(?:return(?:s|ed)?|exit(?:s|ed)?|status|code|fail(?:s|ed)?)\s+(?:\w+\s+){0,2}?(\d{1,5})\b(?![.,]\d)",
    re.IGNORECASE)


def _opens_value_entry(text: str) -> bool:
    """Whether ``text`` is the entry of a value (:data:`_VALUE_ENTRY`), quoted whole as an option's is."""
    return _VALUE_ENTRY.match(text) is not None


def _named_status(question: str) -> str:
    """The exit status ``question`` says it got (:data:`_NAMES_A_STATUS`), or ``""``."""
    found = _NAMES_A_STATUS.search(question)
    return found.group(1) if found else ""


def _entry_tag(text: str) -> str:
    """The tag an entry opens with: an option's or a setting's on a line of its own (``-k, --keep``, ``[-p proto]``,
    ``PermitRootLogin``), the option that opens its first line, or the number of a value's entry (:data:`_VALUE_ENTRY`:
    an exit status's); ``""`` when ``text`` is no such entry."""
    value = _VALUE_ENTRY.match(text)
    if value is not None:
        return value.group(1)
    first = text.lstrip().partition("\n")[0].strip()
    if _opens_with_tag_line(text) or (_opens_option_entry(text) and option_tag(first)):
        return first
    return first.split(None, 1)[0] if _opens_option_entry(text) else ""


def _answer_kinds(question: str, texts: Sequence[str], contexts: Sequence[str], terms: Sequence[Sequence[str]]
                  ) -> Iterator[list[bool]]:
    """For each kind of sentence an answer to ``question`` should be, whether each answer sentence is of that kind
    (``texts``, with their heading paths and analysed terms); one that is not keeps :data:`LEAD_IN_SHARE` of its
    score. The kinds of :func:`_kinds_asked`, and three that only an answer needs (a quote may be any of them)."""
    # A lead-in ("To build a statically linked version of jq, run:") introduces what follows; it answers nothing.
    yield [not text.rstrip().endswith((":", "：")) for text in texts]
    # A man page's NAME and SYNOPSIS lines ("split - split a file into pieces") share the command's name with
    # every question about it; they answer "What is split?", not what one of its options does.
    if not _ASKS_WHAT_IT_IS.match(question):
        yield [not _SYNOPSIS_SECTION.search(_section(context)) for context in contexts]
    # A question written in Chinese is answered in Chinese where the evidence says it in both languages (a man
    # page and its translation): "touch 的 --time 参数写成 mtime…" by the translated line, not the English one.
    if has_cjk(question) and any(has_cjk(text) for text in texts):
        yield [has_cjk(text) for text in texts]
        # "mkfifo 创建管道的时候怎样指定权限？" is answered by the option that does it ("-m, --mode=模式
        # 将文件权限位设置为…"), not by the page's description ("使用给定的名称创建命名管道"), which holds more of its
        # characters.
        if _ASKS_HOW_TO.search(question):
            yield [opens_with_option(text) for text in texts]
    yield from _kinds_asked(question, texts, terms)


def _completing_kind(question: str) -> re.Pattern[str] | None:
    """What a quote's run of sentences should hold for ``question`` when its best sentence does not: a reason for
    "why…?", a default, an amount, a condition, which setting wins or a way for a question that asks for one;
    ``None`` for other questions and for claims."""
    if not asks_a_question(question):
        return None
    if _ASKS_WHY.search(question):
        return _GIVES_REASON
    if _ASKS_FOR_DEFAULT.search(question):
        return _COMPLETES_DEFAULT
    if _asks_for_amount(question):
        return _STATES_AMOUNT
    if _ASKS_FOR_A_CONDITION.search(question):
        return _GIVES_CONDITION
    if _ASKS_WHICH_WINS.search(question):
        return _GIVES_PRECEDENCE
    return _GIVES_WAY if _ASKS_HOW_TO.search(question) else None


def _amount_asked(question: str, texts: Sequence[str]) -> Iterator[list[bool]]:
    """For a question that asks for an amount, whether each sentence (``texts``) states one; nothing for any other
    question (see :func:`_kinds_asked`)."""
    if asks_a_question(question) and _asks_for_amount(question):
        yield [bool(_STATES_AMOUNT.search(_amount_text(question, text))) for text in texts]


def _kinds_asked(question: str, texts: Sequence[str], terms: Sequence[Sequence[str]], *, options: bool = True,
                 amounts: bool = True) -> Iterator[list[bool]]:
    """For each kind of sentence ``question`` asks for (a default, a reason, a replacement, which setting wins, a
    condition; with ``amounts`` an amount, and with ``options`` what an option does), whether each sentence (``texts``,
    with their analysed ``terms``) is of that kind: the quotes and the answer both prefer the sentence that says what
    was asked to one that only shares its words. The quotes leave the options to the answer: "usermod -G kicked my user
    out of their other groups; how do I add a group without removing the others?" names -G and is answered by -a, which
    only a quote can show."""
    asked = asks_a_question(question)  # a claim ("… raises the maximum number of …") asks for no amount
    # A number is what "how many", "how often" or "the smallest … length" asks for: a sentence without one states
    # no amount ("Normally Wget gives up on a URL…" against "The default is to retry 20 times").
    if amounts:
        yield from _amount_asked(question, texts)
    # "What is the default login shell?" and "…print by default?" are answered by the sentence that states a
    # default ("Default 16"), not by an example that happens to say "20 octets per line".
    # "Why did coreutils bring back the symlinks?" is answered by the sentence that gives a reason ("as this causes
    # problems with date display"), not by the one that only says they were removed; "why does file normally
    # refuse … unless I pass -s?" asks for the reason, not for the default it names.
    why = asked and _ASKS_WHY.search(question) is not None
    if asked and not why and _ASKS_FOR_DEFAULT.search(question):
        yield [bool(_STATES_DEFAULT.search(text)) for text in texts]
    if why:
        yield [bool(_GIVES_REASON.search(text)) for text in texts]
    # "What am I supposed to use instead?" is answered by the sentence that names the replacement ("superseded by
    # --control-list", "或使用 sort -u 而非 uniq"), not by the one that says the old way is deprecated.
    replacement = asked and _ASKS_FOR_REPLACEMENT.search(question) is not None
    if replacement:
        yield [bool(_GIVES_REPLACEMENT.search(text)) for text in texts]
    # "Which one does less actually use?" is answered by what says which wins ("… the value in the lesskey file takes
    # precedence"); "is there any precondition?" by what says what is needed ("A loss model has to be used …").
    if asked and _ASKS_WHICH_WINS.search(question):
        yield [bool(_GIVES_PRECEDENCE.search(text)) for text in texts]
    if asked and _ASKS_FOR_A_CONDITION.search(question):
        yield [bool(_GIVES_CONDITION.search(text)) for text in texts]
    # "Where can I put my own fonts …?" is answered by the sentence that names a place ("Any font installed in
    # /usr/share/fonts or ~/.fonts will be accessible …"), "Which signal …?" by the one that names a signal: the
    # statements a question of such a kind needs (:data:`_STATEMENTS_ASKED`) rank too.
    for statement in _statements_asked(question) if asked else ():
        if statement is not _TELLS_DEFAULT:
            yield [bool(statement.search(text)) for text in texts]
    # "Can I put `update = !./sync.sh` in .gitmodules?" is answered by what says it is allowed or not ("For
    # security reasons, the !command form is not accepted here."), not by what describes the setting.
    if asked and _ASKS_IF_ALLOWED.match(question):
        yield [bool(_SAYS_IF_ALLOWED.search(text)) for text in texts]
    # A question about an option ("What does xargs -0 do?") is answered by what is said of that option (the line
    # of "-0, --null"), not by the page's description of xargs, which holds more of its words; "when I don't pass
    # -n" asks what happens without the option, so its line is not the answer; nor is the line of the option a
    # question wants a replacement for.
    if not options:
        return
    named = set() if replacement else _named_options(question)
    if named:
        yield [bool(named.intersection(sentence)) for sentence in terms]
    elif _ASKS_FOR_OPTION.search(question):
        # "Which option makes cp copy directories recursively?" is answered by an option's own line
        # ("-R, -r, --recursive  copy directories recursively"), not by the page's NAME line or a sentence
        # that happens to say "makes" and "options".
        yield [opens_with_option(text) for text in texts]


def _without_answer_kind_words(text: str) -> str:
    """A Chinese question without its question words and the words that say what kind of answer is wanted
    (什么, 选项, 作用, …): "rm 的 -f 选项做什么" is answered by the option's line, not by a sentence that
    happens to say 选项 twice."""
    if _CJK_SPLIT.search(text) is None:
        return text
    for word in (*CJK_QUESTION_WORDS, *CJK_GATE_STOPWORDS):
        text = text.replace(word, " ")
    return text
