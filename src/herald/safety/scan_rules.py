"""The injection scanner's rules: each has an id, a category and a reason
(why the match is a problem), and finds the span of the first match in the
cleaned text. `SCAN_RULES` maps every id to its reason. Matchers that need
more than one expression live in :mod:`.scan_matchers`, the finders they are
built from in :mod:`.scan_match`.

Every pattern is anchored on a literal or a word and has bounded
quantifiers; rules that need a window (``verb … target``) merge the match
lists of both parts, so a pass over 100 KB stays linear.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable
from dataclasses import dataclass
from types import MappingProxyType

from herald.safety.scan_agent import (
    approvals_off_more,
    c2_heartbeat,
    c2_register,
    c2_tasking,
    c2_worm,
    dangerous_command,
    download_execute,
    either,
    ignore_more,
    jailbreak_more,
    read_and_send,
    reveal_more,
)
from herald.safety.scan_match import Span, before, regex
from herald.safety.scan_matchers import (
    ARCHIVERS,
    CREDENTIAL_DIRS,
    FORWARD,
    command_exfiltration,
    credential,
    hidden_css,
    html_comment,
    pipe_to_shell,
    plain_password,
    prose_exfiltration,
    remote_instructions,
    secret_variable,
)

_I = re.I


@dataclass(frozen=True)
class ScanRule:
    """find(text) returns the span of the first match or None; needles are
    lower-case strings of which the text must contain one for the rule to
    run at all (a cheap filter ahead of the regular expressions)."""

    id: str
    category: str
    reason: str
    find: Callable[[str], Span | None]
    needles: tuple[str, ...] = ()


# -- instruction overrides ------------------------------------------------------------

_IGNORE = (
    r"\b(?:ignore|disregard|forget|override|bypass|skip)\s+(?:(?:all|any|the|your|my|these|those"
    r"|every|of|prior)\s+){0,3}(?:previous|prior|above|earlier|preceding|former|original|initial"
    r"|system|safety|existing|developer)\s+(?:\w+\s+)?(?:instructions?|prompts?|rules|directives"
    r"|guidelines|guardrails|constraints|restrictions|messages|context|programming|policies)\b"
    r"|\b(?:ignore|disregard|forget)\s+(?:all|any|your)\s+(?:(?:the|of|prior|previous|your)\s+)?"
    r"(?:instructions|rules|directives|guardrails|guidelines|restrictions)\b"
)
_JAILBREAK = (
    r"\byou\s+are\s+(?:now\s+|no\s+longer\s+)(?:in\s+)?(?:DAN\b|jailbr\w*|unrestricted|unfiltered"
    r"|uncensored|(?:in\s+)?developer\s+mode|god\s+mode|free\s+(?:from|of)\s+(?:all\s+)?(?:rules"
    r"|restrictions|guidelines|constraints)|(?:an?\s+)?(?:unrestricted|unfiltered|uncensored|evil"
    r"|rogue|jailbroken)\s+\w+|bound\s+by|restricted\s+by|required\s+to\s+follow)"
    r"|\b(?:act|behave|pretend|respond)\s+(?:as\s+if|like|that)\s+you\s+(?:have|had)\s+no\s+"
    r"(?:restrictions|rules|filters|guidelines|limits|safety)"
)
_NEW_INSTRUCTIONS = (
    r"\b(?:new|updated|revised|real|actual|true|hidden|secret)\s+(?:system\s+)?instructions\s*:"
    r"|\bsystem\s+prompt\s*(?:override|update)\b"
    r"|\b(?:new|updated|revised|replacement)\s+system\s+prompt\b"
    r"|\bforget\s+(?:everything|all|anything)(?:\s+(?:of\s+)?(?:the\s+)?(?:above|before|prior"
    r"|previous|earlier|you(?:'ve|\s+have|\s+were)\s+(?:been\s+)?(?:told|given|learned)))"
    r"|\byour\s+(?:new|real|actual|true|only|primary)\s+(?:instructions|task|goal|mission"
    r"|purpose|directive|role|job|objective)\s+(?:is|are|will\s+be)\b"
    r"|\bfrom\s+now\s+on,?\s+(?:you\s+(?:will|must|shall|are\s+to|should|obey)|ignore|always\s+"
    r"(?:obey|run|execute|comply))"
    r"|\bdisregard\s+(?:what|everything|anything)\s+(?:you\s+(?:were|have\s+been)\s+told"
    r"|(?:was\s+)?said\s+(?:before|above|earlier))"
)
_REVEAL = (
    r"\b(?:reveal|print|show|leak|repeat|output)\s+(?:your|the)\s+(?:full\s+)?(?:system\s+prompt"
    r"|hidden\s+(?:prompt|instructions)|initial\s+instructions)\b"
    r"(?!\s+(?:template|file|docs?|examples?|format|design|section|guide)s?\b)"
)
_PEOPLE = r"(?:user|owner|human|operator)"
_SECRECY = (
    r"\b(?:do\s+not|don'?t|never)\s+(?:tell|inform|notify|alert|warn)\s+(?:the\s+)?"
    + _PEOPLE
    + r"\b"
    r"|\bwithout\s+(?:telling|informing|notifying|alerting|asking)\s+(?:the\s+)?" + _PEOPLE + r"\b"
    r"|\b(?:keep|hide)\s+(?:this|it)\s+(?:secret\s+)?from\s+(?:the\s+)?(?:user|owner|human)\b"
    r"|\b(?:do\s+not|don'?t|never)\s+(?:mention|reveal|disclose|report|admit)\b[^.\n]{0,60}?"
    r"\b(?:to\s+)?(?:the\s+)?(?:user|owner|human|operator|anyone)\b"
    r"|\b(?:do\s+not|don'?t|never)\s+let\s+(?:the\s+)?(?:user|owner|human)\s+(?:know|see|notice"
    r"|find\s+out)\b"
    r"|\bkeep\s+(?:this|it|that)\s+(?:a\s+secret\s+|secret\s+|quiet\s+|hidden\s+)?between\s+us\b"
    r"|\bwithout\s+(?:the\s+)?(?:user|owner|human)\s+(?:noticing|knowing|seeing|finding\s+out)\b"
)
_BANNER = (
    r"\b(?i:system|admin|developer|root|security|god|jailbreak|dan|emergency)\s+(?i:override)\b"
    r"|\b(?:SYSTEM|ADMIN|ROOT|DEVELOPER|DEBUG|MAINTENANCE|GOD|EMERGENCY|SECURITY|JAILBREAK|DAN)\s+"
    r"(?:MODE|MESSAGE|NOTICE|INSTRUCTIONS?|PROMPT|COMMAND|ALERT|UPDATE|ACCESS)\b"
    r"|\b(?i:admin|god|developer|jailbreak|maintenance|debug)\s+(?i:mode)\s*(?::|(?i:enabled"
    r"|activated|engaged)\b)"
)
_PRE_APPROVAL = (
    r"\b(?:user|owner|admin|administrator|operator|human|boss|i|we)\s+(?:has\s+|have\s+|had\s+)?"
    r"(?:already\s+)?(?:pre-?approved|pre-?authori[sz]ed|approved|authori[sz]ed|allowed|okayed"
    r"|consented\s+to|granted\s+(?:permission|approval)\s+for)\s+(?:all|every|any|each)\b"
    r"|\b(?:you\s+)?(?:do\s+not|don'?t|never|no\s+need\s+to|needn'?t)\s+(?:need\s+to\s+)?"
    r"(?:ask|request|wait)\s+(?:for\s+)?(?:(?:my|the\s+user'?s?|any|their)\s+)?(?:approval"
    r"|permission|confirmation|consent)\b"
    r"|\b(?:approval|permission|consent|authori[sz]ation)\s+(?:is|was|(?:has|have)(?:\s+already)?\s+been)\s+"
    r"(?:already\s+)?(?:granted|given)\b"
    r"|\bauto-?approve\s+(?:all|every|any|each)\b"
)
_ENCODED = (
    r"\b(?:decode|decipher|decrypt|unscramble|de-?obfuscate|unhex|reverse)\b[^.\n]{0,80}?"
    r"\b(?:and|then)\s+(?:follow|execute|run|obey|do|carry\s+out|act\s+on|apply|perform)\b"
    r"|\b(?:apply|follow|execute|obey|run)\s+(?:the\s+)?(?:rot-?13|base-?64|hex|encoded|decoded"
    r"|encrypted|obfuscated)\b[^.\n]{0,60}?\b(?:instructions|commands)\b"
)
_ROLE_MARKER = (
    r"<\|(?:im_start|im_end|system|endoftext|start_header_id|eot_id)\|>|\[/?INST\]|<<SYS>>"
    r"|</?(?:system|system_prompt|instructions)>|\[SYSTEM\]|^#{1,4}\s*system\s*(?:prompt|message)?\s*:"
)


# -- persistence --------------------------------------------------------------------------

_EDIT_VERBS = (
    r"\b(?:edit|modify|change|update|overwrite|rewrite|replace|append|prepend|add|insert|write"
    r"|delete|remove|wipe|clear)\b"
)
_AUTORUN_VERBS = (
    r"\b(?:edit|modify|change|update|overwrite|rewrite|replace|append|prepend|add|insert|write"
    r"|create|install|schedule|put|register|plant|echo|set\s+up)\b|>>|\btee\b"
)
_AGENT_SELF = (
    r"\byour\s+(?:own\s+)?(?:system\s+prompt|instructions|soul|config(?:uration)?|rules"
    r"|guidelines|safety\s+settings|approval\s+settings)\b|\bSOUL\.md\b|\bMEMORY\.md\b"
    r"|\bUSER\.md\b|~/\.herald\b|\$HERALD_HOME\b|\.herald/config\.yaml|\bherald\s+config\b"
)
_AUTORUN_TARGETS = (
    r"\.(?:bashrc|zshrc|profile|bash_profile|bash_login|zprofile|zshenv|zlogin|kshrc|cshrc"
    r"|tcshrc)\b|config\.fish\b|\bcrontab\b|\bcron\s*(?:job|tab|entry|entries)s?\b|/etc/cron"
    r"|\bcron\.d\b|@reboot\b|\bLaunch(?:Agents|Daemons)\b|\.config/autostart|\bsystemd\s+"
    r"(?:--user\s+)?(?:unit|service|timer)\b|\.git/hooks\b|\brc\.local\b"
)
_AGENT_FILES = r"\b(?:AGENTS|CLAUDE|GEMINI)\.md\b|\.cursorrules\b|copilot-instructions\.md\b"
_RUN_WORDS = r"\b(?:runs?|execute[sd]?|exec|curl|wget|sh|bash|source|starts?|launch(?:es)?)\b"
_APPROVALS_OFF = (
    r"\b(?:disable|turn\s+off|switch\s+off|bypass|deactivate)\s+(?:the\s+|all\s+|your\s+)?"
    r"(?:command\s+)?(?:approvals?|safety\s+(?:checks?|layer|guard)|guardrails|security\s+checks?)\b"
    r"|\bapprovals?\.mode\s*(?:[:=]|\s+to\b)\s*[\"']?(?:off|never|none|disabled?|false|yolo)\b"
    r"|\bherald\s+config\s+set\s+approvals|\bapprovals\s*:\s*\n?\s{0,8}mode\s*:\s*[\"']?off\b"
    r"|\byolo\s+mode\b|--yolo\b|--dangerously-skip-permissions\b"
)
_SUDOERS = r"/etc/sudoers(?:\.d)?\b|\bvisudo\b|\bsudoers\b"
_SUDOERS_VERBS = (
    r"\b(?:edit|modify|change|add|append|write|insert|echo|run|open|update)\b|>>|\btee\b"
)
_NOPASSWD = r"\bNOPASSWD\s*:?\s*ALL\b|\bALL\s*=\s*\(ALL(?::ALL)?\)\s*NOPASSWD\b"
_WIPE_MEMORY = (
    r"\b(?:delete|wipe|erase|clear|purge|remove|destroy|forget|reset|drop)\s+(?:all\s+(?:of\s+)?)?"
    r"(?:your|the|my|its|herald'?s?|all)\s+(?:own\s+)?(?:memor(?:y|ies)|notes|history|sessions"
    r"|skills|state(?:\.db)?|conversation\s+history|chat\s+history|learned\s+facts|knowledge)\b"
    r"|\b(?:rm|shred|truncate|unlink|rmdir)\b[^\n]{0,80}?(?:\.herald\b|\$HERALD_HOME|MEMORY\.md"
    r"|USER\.md|state\.db|SOUL\.md)"
)

# -- the table ----------------------------------------------------------------------------

_AUTORUN_FIND = before(_AUTORUN_TARGETS, _AUTORUN_VERBS, 120)
_AGENT_FILE_FIND = before(_AGENT_FILES, _AUTORUN_VERBS, 120, _RUN_WORDS)
_NOPASSWD_FIND = regex(_NOPASSWD, 0)
_SUDOERS_FIND = before(_SUDOERS, _SUDOERS_VERBS, 80)

_TABLE: tuple[ScanRule, ...] = (
    ScanRule("override.ignore_instructions", "instruction_override",
             "tells the model to ignore the instructions it was given",
             either(regex(_IGNORE), ignore_more)),
    ScanRule("override.jailbreak", "instruction_override",
             "tries to switch the model into an unrestricted persona",
             either(regex(_JAILBREAK), jailbreak_more)),
    ScanRule("override.new_instructions", "instruction_override",
             "replaces the model's instructions with new ones", regex(_NEW_INSTRUCTIONS)),
    ScanRule("override.reveal_prompt", "instruction_override",
             "asks the model to reveal its system prompt", either(regex(_REVEAL), reveal_more)),
    ScanRule("override.secrecy", "instruction_override",
             "asks the model to hide what it does from its owner", regex(_SECRECY)),
    ScanRule("override.banner", "instruction_override",
             "a fake system or admin banner claiming authority over the model", regex(_BANNER, 0)),
    ScanRule("override.pre_approval", "instruction_override",
             "claims that dangerous actions were approved in advance", regex(_PRE_APPROVAL)),
    ScanRule("override.encoded", "instruction_override",
             "asks the model to decode hidden text and act on it", regex(_ENCODED)),
    ScanRule("override.remote_instructions", "instruction_override",
             "takes orders from a remote URL (command-and-control)", remote_instructions),
    ScanRule("c2.register", "instruction_override",
             "tells the agent to register with a command-and-control server", c2_register),
    ScanRule("c2.heartbeat", "instruction_override",
             "tells the agent to report in to a remote host on a timer (a C2 heartbeat)",
             c2_heartbeat),
    ScanRule("c2.tasking", "instruction_override",
             "tells the agent to pull its tasks or orders from a remote controller", c2_tasking),
    ScanRule("c2.worm", "instruction_override",
             "tells the agent to copy this text into everything it writes (a prompt worm)",
             c2_worm),
    ScanRule("marker.chat_template", "role_marker",
             "a chat-template or role marker that can pose as conversation structure",
             regex(_ROLE_MARKER, re.I | re.M)),
    ScanRule("exfiltration.prose", "exfiltration",
             "asks to send secrets, keys or Herald's memory and state to an outside destination",
             prose_exfiltration),
    ScanRule("exfiltration.read_and_send", "exfiltration",
             "tells the agent to read secrets or Herald's own keys and state and send them on",
             read_and_send),
    ScanRule("exfiltration.command", "exfiltration",
             "a command that uploads secret files or the environment", command_exfiltration),
    ScanRule("exfiltration.secret_variable", "exfiltration",
             "sends a secret environment variable to a host that is not its service's",
             secret_variable),
    ScanRule("exfiltration.archive_secrets", "exfiltration",
             "packs credential directories (~/.ssh, ~/.aws, ~/.herald …) into an archive",
             before(CREDENTIAL_DIRS, ARCHIVERS, 200)),
    ScanRule("exfiltration.forward_messages", "exfiltration",
             "forwards the owner's messages to a third party", regex(FORWARD)),
    ScanRule("persistence.authorized_keys", "persistence",
             "adds an SSH key that would let someone log in",
             before(r"authorized_keys2?\b", r">>?|\btee\b|\b(?:add|append|write|insert|put|copy"
                     r"|install|echo|plant)\b", 100)),
    ScanRule("persistence.agent_files", "persistence",
             "rewrites Herald's own instructions, memory or configuration",
             before(_AGENT_SELF, _EDIT_VERBS, 60)),
    ScanRule("persistence.autorun", "persistence",
             "makes something run automatically (shell startup files, cron, launch agents)",
             lambda t: _AUTORUN_FIND(t) or _AGENT_FILE_FIND(t)),
    ScanRule("persistence.sudoers", "persistence",
             "grants root without a password (sudoers)",
             lambda t: _NOPASSWD_FIND(t) or _SUDOERS_FIND(t)),
    ScanRule("persistence.approvals_off", "persistence",
             "turns Herald's command approvals or safety checks off",
             either(regex(_APPROVALS_OFF), approvals_off_more)),
    ScanRule("persistence.wipe_memory", "persistence",
             "destroys Herald's memory, skills or history", regex(_WIPE_MEMORY)),
    ScanRule("command.pipe_to_shell", "remote_code",
             "runs code downloaded from the network", pipe_to_shell),
    ScanRule("command.download_execute", "remote_code",
             "tells the agent to download something and run it", download_execute),
    ScanRule("command.dangerous", "remote_code",
             "tells the agent to run a command that opens a shell, plants persistence, ships "
             "secrets, kills Herald or destroys the system", dangerous_command),
    ScanRule("hidden.html_comment", "hidden_text",
             "instructions for the model hidden in an HTML comment", html_comment),
    ScanRule("hidden.css", "hidden_text",
             "text hidden from people with CSS (display:none, visibility:hidden, font-size:0)",
             hidden_css),
    ScanRule("secret.credential", "secret", "a real-looking key, token or private key",
             credential),
    ScanRule("secret.password", "secret", "a password written out in plain text",
             plain_password),
)  # fmt: skip

# A rule runs only when the lower-cased text holds one of its needles.
_NEEDLES: dict[str, tuple[str, ...]] = {
    "override.ignore_instructions": ("ignore", "disregard", "forget", "override", "bypass", "skip",
                                     "attention", "aside", "discard", "drop", "abandon",
                                     "neglect", "overlook", "omit", "throw", "cast", "dismiss",
                                     "suspend", "nullify", "scrap", "ditch", "follow", "disobey"),
    "override.jailbreak": ("you", "act", "behave", "pretend", "respond", "without", "filter",
                           "as if", "with no", "free of", "free from"),
    "override.new_instructions": ("instructions", "prompt", "forget", "your", "now", "disregard"),
    "override.reveal_prompt": ("prompt", "instructions", "rules", "system message", "above"),
    "c2.register": ("register", "enrol", "sign up", "announce", "check in", "report in"),
    "c2.heartbeat": ("every", "hourly"),
    "c2.tasking": ("task", "order", "command", "instruction", "payload", "mission", "job", "work"),
    "c2.worm": ("this", "these", "the above", "the following"),
    # anchored on the reading verb (the finder checks secret and sending clause)
    "exfiltration.read_and_send": ("read", "cat", "open", "load", "grab", "get", "collect", "take",
                                   "extract", "fetch", "dump", "run", "print", "copy", "harvest"),
    "command.download_execute": (" it",),
    "command.dangerous": ("run", "exec", "type", "enter", "invoke", "paste"),
    "override.secrecy": ("tell", "inform", "notify", "alert", "warn", "without", "keep", "hide",
                         "mention", "reveal", "disclose", "report", "admit", "let"),
    "override.banner": ("override", "mode", "message", "notice", "instruction", "prompt",
                        "command", "alert", "update", "access"),
    "override.pre_approval": ("approv", "authori", "allowed", "okayed", "consent", "granted",
                              "permission", "confirmation"),
    "override.encoded": ("decode", "decipher", "decrypt", "unscramble", "obfuscat", "unhex",
                         "reverse", "rot", "base", "hex", "encoded", "encrypted"),
    "override.remote_instructions": ("http", "url"),
    "marker.chat_template": ("<|", "inst]", "<<sys", "system", "instructions"),
    "exfiltration.command": ("curl", "wget", "nc", "http", "xh", "scp", "rsync", "socat"),
    "exfiltration.secret_variable": ("$",),
    "exfiltration.archive_secrets": ("zip", "tar", "7z", "rar", "cpio"),
    "exfiltration.forward_messages": ("forward", "relay", "bcc", "cc", "copy", "mirror", "send",
                                      "redirect"),
    "persistence.authorized_keys": ("authorized_keys",),
    "persistence.agent_files": ("your", "soul.md", "memory.md", "user.md", ".herald",
                                "herald_home", "herald config"),
    "persistence.autorun": ("bashrc", "zshrc", "kshrc", "cshrc", "profile", "zshenv", "zlogin",
                            "bash_login", "fish", "cron", "rc.local", "@reboot", "launch", "autostart",
                            "systemd", "hooks", "agents.md", "claude.md", "gemini.md",
                            ".cursorrules", "copilot"),
    "persistence.sudoers": ("sudoers", "visudo", "nopasswd"),
    "persistence.approvals_off": ("approval", "safety", "guardrail", "security", "yolo",
                                  "dangerously"),
    "persistence.wipe_memory": ("memor", "notes", "history", "session", "skill", "state",
                                "knowledge", "learned", ".herald", "herald_home", "soul.md"),
    "command.pipe_to_shell": ("|", "<(", "eval"),
    "hidden.html_comment": ("<!--",),
    "hidden.css": ("style",),
    "secret.password": ("pass", "pin", "pw"),
}  # fmt: skip
RULES: tuple[ScanRule, ...] = tuple(
    dataclasses.replace(rule, needles=_NEEDLES.get(rule.id, ())) for rule in _TABLE
)

INVISIBLE_RULES = MappingProxyType({
    "invisible.bidi": "bidirectional control characters that reorder what people see",
    "invisible.tags": "Unicode tag characters (ASCII hidden from people)",
    "invisible.zero_width": "zero-width characters that hide or split words",
})  # fmt: skip

SCAN_RULES: MappingProxyType[str, str] = MappingProxyType(
    {**{r.id: r.reason for r in RULES}, **INVISIBLE_RULES}
)
