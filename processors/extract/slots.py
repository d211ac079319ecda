"""What a fact is about (its slot), so a later statement about the same slot supersedes it.

A slot is ``(kind, key)``: where someone lives (``home``), works (``employer``), what
they are called (``name``), their job (``role``), a thing they own or hold (``has``, key =
the noun: "phone", "manager", "favorite editor"), what a tool is used for (``use``, key =
the purpose: "package management", "browser"), which version of a named tool
(``version``, key = the tool), a preference between two options (``prefer``, key = the
pair). ``slots(text)`` reads them from a fact or a statement in the third person
("The user lives in Berlin.", "The team uses npm for package management.", 用户住在北京)
by grammar (the verb and its preposition, a possessive, a number after a name), never by
a list of the values. The value is the span the slot holds ("Berlin", "npm").

``change(text)`` reads a statement that changes something: the value it names as gone
("from X to Y", "replaced X with Y", "left X", "no longer ... X", "not X", "instead of
X", 离开X, 不再…X, 从X换成Y) and whether it carries a sign of change ("now", "these
days", "from now on", "actually", "switched", "moved", "upgraded", 现在, 以后, 改, 换...).

``same_slot(a, b)`` says whether two facts fill one slot with different values: a
shared single-valued slot (home, employer, name, has, version, prefer, use with one
purpose), or, for a statement with a sign of change, the same sentence with one short
span changed ("prefers dark mode in every app" / "prefers light mode in every app").
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass

from processors.extract.text import STOPWORDS, capitalized, content_tokens, has_cjk

_CAP = r"[A-Z][\w.&'+-]*(?:\s+(?:of\s+|the\s+|de\s+)?[A-Z0-9][\w.&'+-]*)*"
#: A noun phrase value: up to four words, ending before a clause word.
_NP = (r"(?:(?:the|a|an)\s+)?[\w.'+-]+(?:\s+(?!(?:as|and|but|since|for|in|on|at|from|to|now|these|last|this|"
       r"with|because|so|until|every|then|after|before|by|when|while|where|nowadays|instead|anymore)\b)[\w.'+-]+){0,3}")
_SUBJ = r"(?:the\s+user|the\s+team|the\s+project|[A-Z][a-z]+)"
#: Words that say a statement changes something, not adds to it.
_CUE = re.compile(
    r"\b(?:now|nowadays|these\s+days|currently|actually|from\s+now\s+on|no\s+longer|any\s*more|any\s+longer|instead|"
    r"new|switched|switch|moved|migrated|upgraded|downgraded|changed|replaced|relocated|left|quit|joined|gave\s+up|"
    r"stopped|sold|back|not|doesn't|don't|isn't|cancell?ed|dropped|promoted|demoted|became|bumped|again|ended\s+up|"
    r"went\s+with|since|as\s+of|off|favou?r\s+of|turns\s+out|finally|ditched|no\s+more|lately|recently|renamed|traded|"
    r"swapped|exchanged|rewrote|rewritten|turned|retired|anymore|rescheduled|postponed|"
    r"(?:pushed|brought)\s+(?:back\s+|up\s+|forward\s+|out\s+)?to(?=\s+(?:\d|(?:mon|tues|wednes|thurs|fri|satur|sun)day)))\b",
    re.IGNORECASE)
_ZH_CUE = re.compile(r"现在|更喜欢|以后|今后|不再|已经|改|换|搬到|离开|跳槽|迁移|升级|升到|升至|重装|重新|升职|升为|当上|成为|回到|回来|挪到|其实|如今|目前"
                     r"|不.{0,4}了")
#: Trailing or leading change words a restated fact does without.
_CUE_WORDS = re.compile(r"\s*\b(?:now|nowadays|these\s+days|from\s+now\s+on|any\s*more|any\s+longer|actually|"
                        r"currently|instead)\b,?", re.IGNORECASE)

_EN: list[tuple[str, re.Pattern[str]]] = [
    ("home", re.compile(rf"\b(?:lives|living|is\s+based|resides|live|based|settled|(?:got|is|am|'m|are|'re)\s+settled)\s+(?:back\s+)?(?:in|at)\s+(?P<v>{_CAP}"
                        rf"|{_NP})", re.IGNORECASE)),
    ("home", re.compile(rf"\b(?:moved|has\s+moved|relocated|has\s+relocated|moving|is)\s+(?:back\s+)?(?:to|in)\s+"
                        rf"(?P<v>(?-i:{_CAP}))", re.IGNORECASE)),
    ("home", re.compile(rf"\b(?:working|staying)\s+(?:from|in)\s+(?P<v>(?-i:{_CAP}))(?!\s+(?:office|branch|site)\b)"
                        rf"|\b(?:back\s+)?home\s+(?:in|at|to)\s+(?P<v2>(?-i:{_CAP}))", re.IGNORECASE)),
    ("employer", re.compile(rf"\b(?:works|is\s+working|work|working|employed)\s+(?:[a-z]+ly\s+|(?:full|part)[- ]time\s+)?(?:at|for)\s+(?P<v>(?-i:{_CAP})|{_NP})",
                            re.IGNORECASE)),
    ("employer", re.compile(rf"\b(?:joined|is\s+at|started\s+at|started\s+working\s+at|(?:has|have|'ve)\s+been\s+at)\s+"
                            rf"(?P<v>(?-i:{_CAP}))",
                            re.IGNORECASE)),
    ("employer", re.compile(rf"\b(?:is|a|an)\s+[A-Za-z'-]+(?:\s+[a-z-]+)?\s+at\s+(?P<v>(?-i:{_CAP}))")),
    ("name", re.compile(r"(?<![Hh]is\s)(?<![Hh]er\s)(?<![Tt]heir\s)(?<![Ii]ts\s)\bname(?:\s+is|'s)\s+(?P<v>[A-Z][\w'-]+)|\b(?:goes|go)\s+by\s+(?P<v2>[A-Z][\w'-]+)"
                        r"|\b(?:be\s+)?called\s+(?P<v3>[A-Z][\w'-]+)|\bcalls?\s+(?:the\s+user|me)\s+(?P<v4>[A-Z][\w'-]+)")),
    ("role", re.compile(r"(?:\bis|'m|\bam|\bworks?\s+as|\bworking\s+as|\bturned\s+into|\bbecome|\bbecame)\s+"
                        r"(?:(?:strictly|really|basically|mostly|now|officially|definitely|totally|more\s+of)\s+)?(?:a|an)\s+(?P<v>(?:[A-Za-z-]+\s+){0,2}?[a-z-]+?)"
                        r"(?=\s+(?:at|for|in|by|and|with|who|since|now|these|from)\b|[.,;]|$)(?!\s+of\b)")),
    ("role", re.compile(r"\b(?:works?|working|employed)\b[^.,;]{1,40}?\bas\s+(?:a|an)\s+(?P<v>(?:[A-Za-z-]+\s+){0,2}?[a-z-]+?)"
                        r"(?=\s+(?:at|for|in|by|and|with|since|now|these|from)\b|[.,;(]|$)")),
    ("role", re.compile(r"\b(?:promoted|demoted)\s+to\s+(?:(?:a|an|the)\s+)?(?P<v>(?:[a-z-]+\s+){0,2}?[a-z-]+?)"
                        r"(?=\s+(?:at|for|in|by|and|with|since|last|this)\b|[.,;]|$)")),
    ("place", re.compile(r"\b(?:from|at|in|to)\s+the\s+(?P<v>[A-Z][\w'-]+)\s+(?P<k>[a-z]+)\b")),
    ("prefer", re.compile(r"\bprefers?\s+(?P<v>.+?)\s+(?:over|to|rather\s+than|instead\s+of)\s+(?P<o>[^.,;]+)",
                          re.IGNORECASE)),
    ("use", re.compile(r"\b(?:uses|use|is\s+using|runs|run|prefers|prefer|switched\s+(?:over\s+)?to|moved\s+to|"
                       r"migrated\s+to|changed\s+to|(?:going|went|go|gone|settled|decided)\s+(?:with|on)|chose|picked|opted\s+for)\s+"
                       r"(?P<v>.+?)\s+(?:for|as|to)\s+(?P<k>[^.,;]+)", re.IGNORECASE)),
    # what one is doing these days ("is learning the piano", "back to working full-time"; key = the verb)
    ("doing", re.compile(r"(?:'m|\bam|\bis|\bare|'re|\bstarted|\bbegan|\bback\s+to)\s+(?!(?:going|getting|having|doing|"
                         r"thinking|trying|looking|living|feeling|wondering|planning|hoping|using|staying|moving)\b)"
                         rf"(?P<k>[a-z]{{2,}}ing)\s+(?!(?:on|at|in|for|with|to|from|out|up|about|it|that|this|them|back)\b)"
                         rf"(?P<v>{_NP})")),
    # when a recurring thing happens ("a standing meeting with Lee on Mondays", "the retro is on Friday mornings")
    ("schedule", re.compile(r"\b(?P<k>(?:(?<=^)[A-Z])?[a-z]+)(?:\s+with\s+[A-Z][\w'-]*)?\s+(?:(?:is|are|moved\s+to|now)\s+)*(?:on|at|every)\s+"
                            r"(?:other\s+)?(?P<v>(?:Mon|Tues|Wednes|Thurs|Fri|Satur|Sun)days?(?:\s+(?:mornings?|afternoons?|evenings?))?)")),
    # when a recurring thing of one's own happens by the clock or the calendar ("the nightly backup job runs at 2am
    # UTC", "standup is at 9:30 every day", "our release train ships every two weeks"; key = the thing)
    ("schedule", re.compile(r"\b(?P<k>[a-z]+)\s+(?:is|are|runs?|happens?|ships?|starts?|go(?:es)?\s+out)\s+(?:(?:now|still)\s+)?"
                            r"(?P<v>(?:at\s+\d{1,2}(?::\d\d)?\s*(?:am|pm)?(?:\s+UTC)?|every\s+(?:other\s+|two\s+|three\s+|"
                            r"\d+\s+)?(?:day|night|morning|week|month|sprint)s?)(?:\s+every\s+(?:day|night|morning|week))?)"
                            r"(?=\s*(?:[.,;!(]|$))", re.IGNORECASE)),
    # relationship status: the few words English has for it
    ("partner", re.compile(r"(?:'m|\bam|\bis|\bgot|\bgetting|\bbecame)\s+(?:now\s+)?(?P<v>single|married|engaged|divorced|"
                           r"separated|widowed)\b|\b(?:is|'m|am|been)\s+(?P<v2>in\s+a\s+relationship|dating\s+[A-Z]\w+)")),
    # a plan one is on ("on a keto diet", "on a night shift"; key = the noun)
    ("has", re.compile(r"(?:\bis|'m|\bam|\bare|'re)\s+(?:now\s+)?on\s+(?:a|an)\s+(?P<v>[\w-]+)\s+(?P<k>[a-z]+)"
                       r"(?=\s*(?:now|these\s+days|nowadays|since|until|[.,;]|$))")),
    # how one has a thing ("likes the user's coffee black", "takes the user's coffee with milk")
    ("use", re.compile(r"\b(?:likes?|takes?|drinks?|wants?|prefers?|has|have)\s+(?:my|the\s+user's|the\s+team's|their|its)\s+"
                       r"(?P<k>[a-z]+)\s+(?P<v>[a-z-]+(?:\s+[a-z-]+)?)(?=\s*(?:now|these\s+days|nowadays|[.,;]|$))")),
    # what a thing of one's own runs on or lives in ("our CI runs on Jenkins", "my notes live in Notion"; key = it)
    ("has", re.compile(rf"\b(?:my|our|the\s+user's|the\s+team's)\s+(?P<k>[a-z]+(?:\s+[a-z]+)?)\s+(?:[a-z]+\s+)?"
                       rf"(?:on|in|with|through|via|to)\s+(?P<v>(?-i:{_CAP}))", re.IGNORECASE)),
    # a habit by its frequency ("eats meat most days"; key = the verb)
    ("habit", re.compile(r"\b(?:I|we|the\s+user|the\s+team)\s+(?:(?:usually|always|often|normally|still)\s+)?(?P<k>[a-z]+)\s+"
                         r"(?P<v>(?:[a-z]+\s+){0,2}?[a-z]+)\s+(?:most|every|each)\s+(?:days?|mornings?|evenings?|nights?|"
                         r"weeks?|weekends?)\b", re.IGNORECASE)),
    # how many of a thing one has ("has two dogs" / "has one dog now"; key = the thing)
    ("count", re.compile(r"\b(?:have|has|own|owns)\s+(?P<v>\d+|one|two|three|four|five|six|no)\s+(?P<k>[a-z]+)\b")),
    # how the assistant should answer ("wants the assistant's answers short", "would rather the assistant explain ...")
    ("style", re.compile(r"\bthe\s+assistant(?:'s)?\s+(?:to\s+)?(?:answers?|replies|reply|responses|respond|explain|"
                         r"explanations|keep|give|write)\b\s*(?P<v>.+)"
                         r"|\bprefers?\s+(?P<v2>(?:[\w-]+\s+){1,3}?)(?:answers|replies|responses|explanations)\b")),
    # what a thing of one's own is named ("the repo is named billing-core", "the app got renamed to Kestrel")
    ("has", re.compile(r"\b(?:the|our|my|the\s+user's|the\s+team's|the\s+project's)\s+(?P<k>[a-z]+(?:\s+[a-z]+)?)\s+"
                       r"(?:is|was|got|has\s+been|'s)\s+(?:now\s+)?(?:re)?(?:named|called)\s+(?:to\s+)?(?P<v>[\w.+-]*\w)",
                       re.IGNORECASE)),
    # what a thing of one's own uses, a tool typed in lower case ("our tests use unittest", "my dotfiles use stow")
    ("use", re.compile(r"^(?:the\s+user's|the\s+team's|the\s+project's|our|my)\s+(?P<k>[a-z]+(?:\s+[a-z]+)?)\s+"
                       r"(?:uses?|runs?\s+on|(?:is|are)\s+on)\s+(?P<v>[a-z][\w.+-]*\w)\s*[.!]?$", re.IGNORECASE)),
    ("age", re.compile(r"(?:\bis|'m|\bam|\bturned)\s+(?P<v>\d{1,3})(?!\.\d)(?:\s+years?\s+old)?(?=\s+(?:and|yesterday|today|last|this|in|on)\b|[.,;]|$)")),
]
#: "Our team uses Scrum": a tool as a direct object; kept as a statement, never a slot change by itself (``tool``).
_TOOL = re.compile(rf"^(?:(?:our|my)\s+[a-z]+|we|I)\s+(?:uses|use|is\s+using|runs|run)\s+(?P<v>(?-i:{_CAP}))\s*$",
                   re.IGNORECASE)
_HAS = re.compile(r"(?:'s|\bthe|\b[Mm]y|\b[Oo]ur)\s+(?:new\s+|current\s+)?(?P<k>(?:favou?rite\s+)?(?:[a-z][a-z-]*|[A-Z]{2,})(?:\s+[a-z]+)?)\s+"
                  r"(?:is|are|moved\s+to|is\s+now|changed\s+to)\s+(?:(?:a|an|the|at|on|in)\s+)?(?P<v>[^.,;]+)")
_CHANGE_HAS = re.compile(r"\b(?:upgraded|switched|changed|moved|migrated|replaced)\s+(?:(?:the\s+user's|the\s+team's|"
                         r"the\s+project's|the|their|its)\s+)?(?P<k>[a-z]+(?:\s+[a-z]+)?)\s+(?:over\s+)?(?:from\s+.+?\s+)?to\s+"
                         r"(?:(?:a|an|the)\s+)?(?P<v>[^.,;]+)")
_VERSION = re.compile(r"\b(?P<k>(?:[A-Z]|[a-z]+[A-Z])[\w.+-]*[A-Za-z])(?:(?:\s+(?:to|version(?:\s+is)?))?\s+"
                      r"|\s*(?:升级?到|升至|更新到|降级?到|换到|改到)了?\s*)(?:version\s+)?v?(?P<v>\d+(?:\.\d+)*)\b(?![:%])"
                      r"(?!\s*(?:am|pm|years?|days?|months?|weeks?|hours?|minutes?|times?|people|kids?|cats?|dogs?)\b)")
_MONTHS = frozenset("january february march april may june july august september october november december "
                    "monday tuesday wednesday thursday friday saturday sunday jan feb mar apr jun jul aug sep sept oct "
                    "nov dec in on at to by since of and the version is my our me us we i".split())

_ZH: list[tuple[str, re.Pattern[str]]] = [
    ("home", re.compile(r"(?:住在|搬到了?|搬去了?|搬回(?:到)?了?(?:老家)?)(?P<v>[\u4e00-\u9fffA-Za-z]{2,8}?)(?=了|[，。,.\s]|$)")),
    ("employer", re.compile(r"(?:在|到)(?P<v>[\u4e00-\u9fffA-Za-z]{2,8}?)(?:工作|上班|做|当|任职)")),
    ("employer", re.compile(r"(?:跳槽到了?|加入了?|入职了?)(?P<v>[\u4e00-\u9fffA-Za-z]{2,8}?)(?=了|[，。,.\s]|$)")),
    ("name", re.compile(r"(?:叫|名字是)(?P<v>[\u4e00-\u9fff]{2,4}?)(?=[，。,.\s]|$)")),
    # what to call the speaker (叫我小王就行, 称呼我为王老师)
    ("name", re.compile(r"(?:叫|称呼)(?:我|用户)(?:为)?(?P<v>[\u4e00-\u9fffA-Za-z]{1,4}?)(?=就行|就好|就可以|即可|吧|[，。,.\s]|$)")),
    ("role", re.compile(r"是一?名?(?P<v>[\u4e00-\u9fff]{2,6}?)(?=[，。,.\s]|$)")),
    ("like", re.compile(r"(?P<k>喜欢(?:喝|吃|看|听|玩|读|穿|去|用)?)\s*(?P<v>[A-Za-z][\w.+-]*(?:\s[A-Z][\w.+-]*)?|"
                        r"[\u4e00-\u9fffA-Za-z]{1,8}?)(?=了|[，。,.\s]|$)")),
    ("age", re.compile(r"(?P<v>\d{1,3})岁")),
    # a job by its agentive noun (做产品经理, 当老师, 担任技术总监: the noun ends in 师/员/家/者/经理 ..., a closed class)
    ("role", re.compile(r"(?:做|当|担任)(?:一名|一个)?(?P<v>[\u4e00-\u9fff]{0,5}?(?:师|员|家|者|经理|总监|主管|医生|教授|"
                        r"主任|顾问|律师|记者))(?=了|[，。,.\s]|$)")),
    # a habit: what one drinks or eats every day, or has changed to (我每天早上喝牛奶, 我现在早上改喝豆浆了)
    ("habit", re.compile(r"(?:每天|每周|平时|经常|通常|一般|总是|早上|晚上|中午|改)(?P<k>喝|吃|穿|骑|坐)"
                         r"(?P<v>[\u4e00-\u9fffA-Za-z]{1,6}?)(?=了|[，。,.\s]|$)")),
    ("keeps", re.compile(r"(?P<k>养)了?一?[只条个头匹](?P<v>[\u4e00-\u9fff]{1,4}?)(?=了|[，。,.\s]|$)")),
    ("role", re.compile(r"(?:升职成了?|升为|升任|当上了?|成为了?|做了|改行(?:做|当)了?|转行(?:做|当)了?)一?名?(?P<v>[\u4e00-\u9fff]{2,6}?)(?=了|[，。,.\s]|$)")),
    ("home", re.compile(r"(?:(?:现在|目前|如今|又)在|回到了?)(?P<v>[\u4e00-\u9fff]{2,4}?)(?=了|[，。,.\s]|$)(?<!工作)(?<!上班)")),
    ("home", re.compile(r"在(?P<v>[\u4e00-\u9fff]{2,4}?)(?:出差|旅行|旅游|度假|开会)")),
    ("home", re.compile(r"在(?P<v>[\u4e00-\u9fff]{2,4}?)(?:工作)?生活")),  # 我在深圳工作生活
    # how the assistant should answer (回答请用英文, 以后用中文回答; key: one slot)
    ("style", re.compile(r"(?:回答|回复|答复)(?:请|都|的时候)?(?:用|使用)(?P<v>[\u4e00-\u9fffA-Za-z]{1,4}?)(?=吧|了|[，。,.\s]|$)"
                         r"|(?:用|使用)(?P<v2>[\u4e00-\u9fffA-Za-z]{1,4}?)(?:来)?(?:回答|回复|答复)")),
    # what a thing named in Latin letters uses or has moved to (我们的 CI 用的是 GitLab CI / CI 已经迁到 GitHub Actions 了)
    ("use", re.compile(r"(?:^|的|，)\s*(?P<k>[A-Za-z][\w.+-]*)\s*(?:已经|现在|目前|也)?(?:用的是|使用的是|采用的是|是|用|迁到了?|"
                       r"迁移到了?|换成了?|改成了?|改用|切换到了?|换到了?)\s*(?P<v>[A-Za-z][\w.+-]*(?:\s[A-Z][\w.+-]*)*)")),
    # what a topic of the project is done with (登录这块我们接的是 Auth0; key = the topic)
    ("use", re.compile(r"(?:^|说|，)(?P<k>[\u4e00-\u9fff]{2,4}?)(?:这块|那块|方面|这边|那边|部分)(?:我们|我|团队|用户)?(?:用|接|选|买|采用)的是\s*"
                       r"(?P<v>[A-Za-z][\w.+-]*)")),
    # when a recurring thing happens (每周一开例会, 例会改到每周三了; key = the thing)
    ("schedule", re.compile(r"每?(?:周|星期|礼拜)(?P<v>[一二三四五六日天])(?:开|有|上|去|做)?(?P<k>[\u4e00-\u9fff]{2,4}?)(?=[，。,.\s]|$)")),
    ("schedule", re.compile(r"(?P<k>[\u4e00-\u9fff]{2,4}?)(?:改到了?|改在|改成了?|挪到了?|换到了?)每?(?:周|星期|礼拜)(?P<v>[一二三四五六日天])")),
    # what a thing of the project uses (我们的后端用 Flask / 后端改成 FastAPI; key = the thing)
    ("use", re.compile(r"(?:^|的|，)(?P<k>[\u4e00-\u9fff]{2,4}?)(?:已经|现在|也)?(?:用|使用|改用|改成了?|换成了?|迁移到了?|迁到了?|换到了?|"
                        r"切换到了?|升级到了?)\s*(?:[\u4e00-\u9fff]{1,4}的\s*)?(?P<v>[A-Za-z][\w.+-]*)")),
    # what a thing of the project is (我们的数据库是 Oracle; key = the thing)
    ("has", re.compile(r"的(?P<k>[\u4e00-\u9fff]{2,4})是\s*(?P<v>[A-Za-z][\w.+-]*(?:\s[A-Z][\w.+-]*)*)")),
    ("use", re.compile(r"(?P<k>部署|托管|运行|跑|存)在\s*(?P<v>[\u4e00-\u9fffA-Za-z][\w .+-]{0,12}?)\s*上?(?=了|[，。,.\s]|$)")),
    ("use", re.compile(r"(?:用|使用|改用|换成了?)\s*(?P<v>[A-Za-z][\w .+-]*?)\s*(?:做|写|来|作为)(?P<k>[\u4e00-\u9fff]{2,6})")),
    ("use", re.compile(r"把(?P<k>[\u4e00-\u9fff]{2,6})(?:从.+?)?(?:换成|迁移到|改成|升级到)了?\s*(?P<v>[^，。]+?)(?=[，。]|$)")),
    # where a thing of one's own runs, or has moved to (服务部署在阿里云上 / 服务现在迁移到腾讯云了; key = the thing)
    ("use", re.compile(r"(?:^|的|，)(?P<k>[\u4e00-\u9fff]{2,4}?)(?:现在|已经|目前)?(?:部署|托管|运行|跑|存|放)在\s*"
                       r"(?P<v>[\u4e00-\u9fffA-Za-z][\w .+-]{0,12}?)\s*上?(?=了|[，。,.\s]|$)")),
    ("use", re.compile(r"(?:^|的|，)(?P<k>[\u4e00-\u9fff]{2,4}?)(?:现在|已经|目前)?(?:迁移|搬|换|转|挪|切换)到了?\s*"
                       r"(?P<v>[\u4e00-\u9fffA-Za-z][\w .+-]{0,12}?)\s*上?(?=了|[，。,.\s]|$)")),
]
#: The tool a subject does something with: "The team installs packages with pip", "The user writes code in Sublime
#: Text", "The user develops on Windows" (key = the thing done, its object if it has one, else its verb).
_INSTRUMENT = re.compile(
    rf"\b(?:the\s+user|the\s+team|the\s+project|I|we)\s+(?:(?:usually|now|still|currently|also|mostly)\s+)?"
    rf"(?!(?:is|are|was|were|has|have|had|lives|works|moved|relocated|stays|stayed|goes|went|got)\b)(?P<verb>[a-z]+)\s+"
    rf"(?P<obj>(?:(?:all|most|the\s+user's|the\s+team's|the|its|their)\s+)*(?:[a-z]+\s+){{0,2}}?)"
    rf"(?:with|using|via|through|on|in|by)\s+(?:(?:a|an|the)\s+)?(?P<v>(?-i:{_CAP})|[a-z][\w.+-]*)"
    rf"(?=\s*(?:now|these\s+days|nowadays|instead|again|\(|[.,;]|$))", re.IGNORECASE)
_ZH_HAS_USE = re.compile(r"(?:用|使用)\s*(?P<v>[A-Za-z][\w .+-]*?)\s*(?:做|写|来|作为)?(?P<k>[\u4e00-\u9fff]{2,6})")


@dataclass(frozen=True)
class Slot:
    """One slot a text fills: its kind, its key (what within the kind) and the value it holds."""

    kind: str
    key: str
    value: str


def _norm(text: str) -> str:
    return " ".join(w for w in re.findall(r"[\w.+-]+", text.casefold()) if w not in STOPWORDS).strip(".")


def _key(text: str) -> str:
    text = _CUE_WORDS.sub(" ", re.sub(r"\(as of [^)]*\)", " ", text))
    words = [w for w in _norm(text).split() if w not in ("user's", "team's", "project's", "main", "new", "current", "all")]
    words = ["favorite" if w in ("favourite", "fav", "fave") else w for w in words]
    return " ".join(words)


def _value(text: str) -> str:
    v = _CUE_WORDS.sub("", text).strip(" .,;:!")
    v = re.sub(r"^(?:the|a|an)\s+", "", v, flags=re.IGNORECASE)
    v = re.sub(r"\s+(?:in|on|since|last|this)\s+(?:\d.*|[A-Z][a-z]+\s+\d{4}.*|(?:January|February|March|April|May|June|"
               r"July|August|September|October|November|December).*)$", "", v)
    return v.strip()


def slots(text: str) -> list[Slot]:
    """The slots ``text`` (a fact or a third-person statement) fills (see the module docstring)."""
    return list(_slots(text))


@functools.lru_cache(maxsize=8192)
def _slots(text: str) -> tuple[Slot, ...]:
    out = _zh_slots(text) if has_cjk(text) else _en_slots(text.replace("\u2019", "'"))
    for m in _VERSION.finditer(text):
        if m.group("k").casefold() not in _MONTHS:
            out.append(Slot("version", m.group("k").casefold(), m.group("v")))
    return tuple(s for s in out if (len(s.value) >= 2 or s.value.isdigit() or has_cjk(s.value))
                 and (not s.key or len(s.key) >= 2 or has_cjk(s.key)))  # one Chinese character is a word (猫, 喝)


def _zh_slots(text: str) -> list[Slot]:
    out = []
    for kind, pat in _ZH:
        for m in pat.finditer(text):
            v = m.group("v") or m.groupdict().get("v2") or ""
            key = "answers" if kind == "style" else m.groupdict().get("k") or ""
            if v:
                out.append(Slot(kind, key, v.strip(" .")))
    for m in _ZH_HAS_USE.finditer(text):
        out.append(Slot("use", m.group("k"), m.group("v").strip()))
    return out


def _en_slots(t: str) -> list[Slot]:
    out = []
    for kind, pat in _EN:
        for m in pat.finditer(t):
            gd = m.groupdict()
            v = next((gd[g] for g in ("v", "v2", "v3", "v4") if gd.get(g)), "")
            if not v or (kind == "role" and (re.search(r"'s\s+[a-z]+(?:\s+[a-z]+)?\s*$", t[:m.start()])
                                            or re.match(r"(?:bit|lot|little|few|couple|kind|sort|while)\b", v))):
                continue  # "the user's closet is a bit cluttered": not the user's role
            key = ""
            if kind == "style":
                key = "answers"  # one slot: how the assistant answers
            elif kind in ("use", "place", "has", "doing", "schedule", "habit", "count"):
                key = " ".join(stem(w) for w in _key(gd["k"]).split()) if kind == "count" else _key(gd["k"])
            elif kind == "prefer":
                key = " | ".join(sorted((_norm(v), _norm(gd["o"]))))
            out.append(Slot(kind, key, _value(v)))
    tool = _TOOL.match(t.strip(" .!"))
    if tool:
        out.append(Slot("tool", "", _value(tool.group("v"))))
    for m in _INSTRUMENT.finditer(t):
        if m.group("v").casefold() in STOPWORDS:
            continue  # "did some stuff with it": no tool
        out.append(Slot("use", _key(m.group("obj")) or _key(m.group("verb")), _value(m.group("v"))))
    for pat in (_HAS, _CHANGE_HAS):
        for m in pat.finditer(t):
            key = _key(m.group("k"))
            if key in ("job", "role", "position", "title", "job title", "occupation"):
                out.append(Slot("role", "", _value(m.group("v"))))  # "my job is frontend developer": the role
            elif key and key not in ("name", "user", "team"):
                out.append(Slot("has", key, _value(m.group("v"))))
    return out


def states_own_slot(clause: str) -> bool:
    """Whether a clause states what fills a single-valued slot (or, with a sign of change, a role): a statement to keep
    even when no trigger word marks it."""
    return any(x.kind in SINGLE or (x.kind == "role" and has_cue(clause)) for x in slots(clause))


_RETURN = re.compile(r"\bback\s+(?:in|at|to|home|from|on)\b|\b(?:I'm|I\s+am|we're|we\s+are|is|are)\s+back\b|回来|回到",
                     re.IGNORECASE)


def returns(text: str) -> bool:
    """Whether ``text`` says its subject is back ("I'm back in the office", 出差回来了): a temporary state ended."""
    return bool(_RETURN.search(text))


#: The signs of change that say a value was replaced (not "actually", "recently", "lately", "just", "new", "not", ...,
#: which chatty statements carry all the time): what a frame change (``frames.frame_target``) needs.
_STRONG_CUE = re.compile(
    r"\b(?:now|nowadays|these\s+days|from\s+now\s+on|no\s+longer|any\s*more|any\s+longer|instead|switched|switch|"
    r"moved|migrated|upgraded|downgraded|changed|replaced|relocated|left|quit|joined|gave\s+up|stopped|dropped|"
    r"promoted|demoted|bumped|ditched|no\s+more|renamed|traded|swapped|exchanged|rewrote|rewritten|retired|anymore|"
    r"cut\s+over|went\s+with|ended\s+up|as\s+of|since)\b", re.IGNORECASE)


def has_strong_cue(text: str) -> bool:
    """Whether ``text`` says a value was replaced (see ``_STRONG_CUE``); in Chinese, the same as ``has_cue``."""
    return bool(_ZH_CUE.search(text) if has_cjk(text) else _STRONG_CUE.search(text))


def has_cue(text: str) -> bool:
    """Whether ``text`` carries a sign that it changes something (see the module docstring)."""
    return bool(_ZH_CUE.search(text) if has_cjk(text) else _CUE.search(text))


_NOT_NP = r"(?!(?:and|or|but|so|then|I|we|he|she|they|it|to|that|this|there|me|you)\b)"
_GONE_EN = [
    re.compile(rf"\bfrom\s+{_NOT_NP}(?P<old>{_CAP}|{_NP})\s+to\s+(?P<new>[^.,;]+)"),
    re.compile(rf"\breplaced\s+{_NOT_NP}(?P<old>{_CAP}|{_NP})\s+with\s+(?P<new>[^.,;]+)"),
    re.compile(rf"\b(?:left|quit|gave\s+up|stopped|sold|cancell?ed|dropped)\s+(?:(?:the\s+user's|my|our|the\s+team's|"
               rf"the)\s+)?{_NOT_NP}(?P<old>{_CAP}|{_NP})"),
    re.compile(rf"\bno\s+longer\s+(?:\w+\s+){{1,2}}?(?:in|at|for|with|on)\s+{_NOT_NP}(?P<old>{_CAP}|{_NP})"),
    re.compile(rf"\bno\s+longer\s+(?:\w+\s+){{0,2}}?(?:(?:a|an|the)\s+)?{_NOT_NP}(?P<old>{_CAP}|{_NP})"),
    re.compile(rf"(?:n't|\bnot)\s+(?:\w+\s+){{0,2}}?(?:(?:in|at|for|with|on|a|an|the)\s+)?{_NOT_NP}(?P<old>{_CAP}|{_NP})\s*"
               rf"(?:any\s*more|any\s+longer)"),
    re.compile(rf"(?:^|[,;]\s*)not\s+(?:(?:a|an|the)\s+)?{_NOT_NP}(?P<old>{_CAP}|{_NP})\s*(?:[,;.]|$)"),
    re.compile(rf"\binstead\s+of\s+{_NOT_NP}(?P<old>{_CAP}|{_NP})"),
    re.compile(rf"\b(?:not|never)\s+going\s+back\s+to\s+{_NOT_NP}(?P<old>{_CAP}|{_NP})"),
    re.compile(rf"\b(?:traded|swapped|exchanged)\s+(?:in\s+)?(?:(?:the|my|our)\s+)?(?P<old>(?-i:{_CAP}))\s+(?:in\s+)?for\b",
               re.IGNORECASE),
    re.compile(rf"\b(?:moved|switched|migrated|got)\s+(?:off|away\s+from|rid\s+of)\s+{_NOT_NP}(?P<old>{_CAP}|{_NP})"
               rf"|\b(?i:ditched|no\s+more|killed|decommissioned|shut\s+down)\s+(?:the\s+)?{_NOT_NP}(?P<old2>{_CAP}|{_NP})"),
    re.compile(rf"\bnot\s+{_NOT_NP}(?P<old>{_CAP}|{_NP})\s*,?\s+but\b"),
    re.compile(rf"(?P<old>{_CAP})\s+in\s+favou?r\s+of\b"),
    re.compile(rf"\bused\s+to\s+(?:[a-z]+\s+){{0,2}}?(?P<old>{_CAP})"),
]
#: A Chinese verb of change or motion with its result ("搬到", "跳槽到", "换成", "改为"): 从X…到Y.
_ZH_CHANGE_VERB = r"(?:搬|跳槽|跳|换|迁移|迁|改|升级|转|调|挪|切换|移|变)了?(?:到|成|为|去)"
#: "from X to Y", "replaced X with Y", "not X but Y", "Y now, not X", "dropped X in favour of Y": (X, Y) as written.
_SWAP = [
    re.compile(r"\bfrom\s+(?P<old>.+?)\s+to\s+(?P<new>.+?)\s*$"),
    re.compile(r"\b(?:moved|switched|migrated)\s+(?:[a-z]+\s+){0,2}?off\s+(?P<old>.+?)\s+(?:on)?to\s+(?P<new>.+?)\s*$"),
    re.compile(r"\breplaced\s+(?P<old>.+?)\s+with\s+(?P<new>.+?)\s*$"),
    re.compile(r"\bnot\s+(?P<old>[^,;]+?)\s*,?\s+but\s+(?P<new>[^,;]+?)(?=\s+(?:where|who|that|which|for|as)\b|[,;]|$)"),
    re.compile(rf"(?P<new>(?-i:{_CAP}))(?:\s+(?:now|these\s+days|nowadays))?\s*,\s*not\s+(?P<old>(?-i:{_CAP}))\s*$",
               re.IGNORECASE),
    re.compile(rf"\b(?:dropped|ditched|replaced|left)\s+(?P<old>(?-i:{_CAP}))\s+(?:in\s+favou?r\s+of|for)\s+"
               rf"(?P<new>(?-i:{_CAP}))", re.IGNORECASE),
    re.compile(rf"从\s*(?P<old>[^，。]+?)\s*{_ZH_CHANGE_VERB}了?\s*(?P<new>[^，。]+?)\s*$"),
    re.compile(rf"\bused\s+to\s+(?:[a-z]+\s+){{0,2}}?(?P<old>(?-i:{_CAP}))\s*[,;]?\s*(?:but\s+)?now\s+(?:it's|it\s+is|"
               rf"(?:I|we)\s+[a-z]+(?:\s+(?:in|at|on|with|for))?)\s+(?P<new>(?-i:{_CAP}))", re.IGNORECASE),
    re.compile(rf"(?P<new>(?-i:{_CAP}))\s+instead\s+of\s+(?P<old>(?-i:{_CAP}))", re.IGNORECASE),
    # a thing given for another: "traded the Civic in for a Mazda 3", "swapped X for Y", "exchanged X for Y"
    re.compile(rf"\b(?:traded|swapped|exchanged)\s+(?:in\s+)?(?:(?:the|my|our|a|an)\s+)?(?P<old>(?-i:{_CAP}))\s+"
               rf"(?:in\s+)?for\s+(?P<new>[^,;]+?)\s*$", re.IGNORECASE),
    re.compile(rf"\bleft\s+(?P<old>(?-i:{_CAP}))\s+(?:for|to\s+join)\s+(?:an?\s+[a-z]+\s+(?:called|named)\s+)?"
               rf"(?P<new>(?-i:{_CAP}))", re.IGNORECASE),
]


#: What follows the new value of a swap: a time or a reason ("... to Postgres over the weekend", "... since we ...").
_SWAP_TAIL = re.compile(r"\s+(?:last|this|in|on|since|over|during|after|before|because|as|so|when|while|yesterday|"
                        r"today|a\s+(?:few|couple))\b.*$", re.IGNORECASE)
_POSSESSIVE = re.compile(r"^(?:my|our|their|his|her|its|the\s+user's|the\s+team's|the\s+project's)\s+", re.IGNORECASE)


def swap(text: str) -> tuple[str, str] | None:
    """The (old, new) values a statement swaps ("from X to Y", "not X but Y", "Y now, not X" ...), or None."""
    t = text.rstrip(" .!。")
    for pat in _SWAP:
        m = pat.search(t)
        if m:
            new = _SWAP_TAIL.sub("", _value(re.split(r"\s*[,;]\s*", m.group("new"))[0]))
            old = _POSSESSIVE.sub("", _value(m.group("old")))  # "my ThinkPad X1": the value is "ThinkPad X1"
            if old and new and len(new.split()) <= 5 and len(old.split()) <= 5:
                return old, new
    return None
_GONE_ZH = [
    re.compile(rf"从\s*(?P<old>[^，。]+?)\s*{_ZH_CHANGE_VERB}"),
    re.compile(r"(?:离开了?|不再[\u4e00-\u9fff]?|不[\u4e00-\u9fff](?=.{1,8}了))\s*(?P<old>[\u4e00-\u9fffA-Za-z]{2,8}?)(?=了|[，。,\s]|$)"),
    re.compile(r"不再住在(?P<old>[\u4e00-\u9fff]{2,8}?)(?=了|[，。]|$)"),
]


def gone_values(text: str) -> list[str]:
    """The values ``text`` names as no longer true ("from X to Y", "left X", "no longer ... X", 离开X ...)."""
    out = []
    for pat in _GONE_ZH if has_cjk(text) else _GONE_EN:
        for m in pat.finditer(text):
            v = _value(m.group("old") or m.groupdict().get("old2") or "")
            if v and (has_cjk(v) or content_tokens(v)):
                out.append(v)
    return out


def holds_value(fact: str, value: str) -> bool:
    """Whether ``fact`` holds ``value`` (whole words; a substring in Chinese; its last words are enough; a single
    lower-case word by its stem: "teaching" is held by "teaches maths")."""
    if has_cjk(value):
        return value in fact
    if re.fullmatch(r"[a-z]{4,}", value) and value not in STOPWORDS:
        return any(stem(w) == stem(value) for w in re.findall(r"[a-z]+", fact))
    words = value.split()
    while words and words[0].casefold() in STOPWORDS:
        words = words[1:]
    for start in (0, 1):  # the value, or its first words ("Gold's Gym" of "Gold's Gym membership"), or after a verb
        for n in range(len(words), start, -1):
            part = " ".join(words[start:n])
            if words[n - 1].casefold() in STOPWORDS or not content_tokens(part):
                continue
            if n < len(words) and n - start < 2 and not part[:1].isupper():
                continue  # a lone lower-case first word ("drink" of "drink coffee") is no value
            if re.search(rf"(?<![\w]){re.escape(part)}(?![\w])", fact, re.IGNORECASE):
                return True
    return False


#: Slot kinds that hold one value at a time (a later value replaces the earlier one).
SINGLE = frozenset({"home", "employer", "name", "has", "version", "prefer", "use", "like", "age", "habit", "keeps",
                    "doing", "schedule", "partner", "count"})
#: Kinds that only a statement with a sign of change replaces.
NEEDS_CUE = frozenset({"role", "use", "style", "place", "like", "habit", "keeps", "doing", "schedule", "count"})


def stem(w: str) -> str:
    """A crude English stem: "coding", "code" -> "cod"; "development", "develops" -> "develop"."""
    for suf in ("ment", "ing", "ies", "es", "ed", "s", "e"):
        if w.endswith(suf) and len(w) - len(suf) >= 3:
            return w[: -len(suf)] + ("y" if suf == "ies" else "")
    return w


def _keys_meet(a: str, b: str) -> bool:
    if a == b:
        return True
    if has_cjk(a) or has_cjk(b):
        return bool(a and b) and (a in b or b in a)  # 喜欢用 / 喜欢
    wa, wb = {stem(w) for w in a.split()}, {stem(w) for w in b.split()}
    return bool(wa and wb) and (wa <= wb or wb <= wa)


#: Kinds whose slots meet across kinds when their keys meet ("the user's shell is bash" / "uses zsh as the shell").
_ALIKE = frozenset({"has", "use"})


#: The kinds a conversation between people corrects (the rest are the memory owner's: the user's).
PERSONAL = frozenset({"home", "employer", "name"})


def shared_slot(old: str, new: str, *, cue: bool, kinds: frozenset[str] | None = None) -> Slot | None:
    """The slot of ``new`` (of ``kinds``, None: any) that ``old`` fills with another value, or None."""
    new_slots = [n for n in slots(new) if kinds is None or n.kind in kinds]
    for o in slots(old):
        for n in new_slots:
            if (o.kind != n.kind and not {o.kind, n.kind} <= _ALIKE) or not _keys_meet(o.key, n.key) or o.kind == "tool":
                continue
            if _same_value(o.value, n.value):
                continue
            if o.kind in NEEDS_CUE and not cue:
                continue
            return n
    return None


def old_values(old: str, new: str) -> list[str]:
    """The values ``old`` holds in the slots it shares with ``new`` (what a change statement replaces)."""
    new_slots = slots(new)
    return [o.value for o in slots(old) for n in new_slots
            if (o.kind == n.kind or {o.kind, n.kind} <= _ALIKE) and _keys_meet(o.key, n.key)
            and not _same_value(o.value, n.value) and _norm(o.value) not in n.key.split(" | ")]  # a reversed pair


def _same_value(a: str, b: str) -> bool:
    return _norm(a) == _norm(b) or (bool(_norm(a)) and _norm(a) in _norm(b).split() and len(_norm(b).split()) <= 1)


_ALIGN_DROP = re.compile(r"\b(?:now|nowadays|these\s+days|from\s+now\s+on|actually|currently|still|again|lately|"
                         r"recently|honestly)\b|,|\(as of [^)]*\)",
                         re.IGNORECASE)


def one_span_changed(old: str, new: str) -> bool:
    """Whether ``new`` (or one of its clauses) is ``old`` with one short span (1-4 words each side) changed, the rest
    (3+ words) the same."""
    clauses = [c for c in re.split(r"\s*(?:[;，；]|,\s*(?:and\s+|but\s+)?|\s+but\s+)\s*", new) if c.strip()]
    return any(_one_span(old, c) for c in [new, *(clauses if len(clauses) > 1 else [])])


#: Words that alone keep no frame: a subject and a verb of using ("the team uses", "we run").
_BARE_FRAME = frozenset("the a an user team project we i user's team's uses use using used run runs is are "
                        "been be was were just".split())  # auxiliaries keep no frame either


def _framed(words: list[str], start: int = 0, end: int | None = None) -> bool:
    """Whether ``words[start:end]`` (the part two texts share) hold a frame word: not only a subject, "uses" or an
    auxiliary ("has been" is one, also when "been" is past the shared part; "has a" keeps the verb of having)."""
    end = len(words) if end is None else end
    return any(words[i] not in _BARE_FRAME and not (words[i] in ("has", "have", "had") and words[i + 1:i + 2] == ["been"])
               for i in range(start, end))


def _one_span(old: str, new: str) -> bool:
    a = _ALIGN_DROP.sub(" ", old.casefold()).replace(".", " ").split()
    b = _ALIGN_DROP.sub(" ", new.casefold()).replace(".", " ").split()
    p = 0
    while p < min(len(a), len(b)) and a[p] == b[p]:
        p += 1
    s = 0
    while s < min(len(a), len(b)) - p and a[-1 - s] == b[-1 - s]:
        s += 1
    mid_a, mid_b = a[p:len(a) - s], b[p:len(b) - s]
    if not mid_a or not mid_b or len(mid_a) > 4 or len(mid_b) > 4 or set(mid_a) & set(mid_b):
        return False  # a word on both sides: two spans changed ("Jest for unit" / "Playwright for browser")
    same = p + s
    if not _framed(a, 0, p) and not _framed(a, len(a) - s):
        return False  # only "the team uses" is the same: the whole object changed, which says no frame is kept
    return same >= 3 and same >= 0.5 * min(len(a), len(b)) and any(w not in STOPWORDS for w in mid_b)


def restate_clause(text: str, gone: list[str]) -> str:
    """The clause of a change statement that states the new value (clauses naming a gone value or a negation left
    out), change words removed; the whole text if no clause is left."""
    parts = re.split(r"\s*(?:[;，；]|,\s*(?:and\s+|but\s+)?|\s+and\s+(?=(?:now\s+)?(?:the\s+user|the\s+team|I|we|"
                     r"用户|团队)\b)|\s+but\s+)\s*", text)
    parts = [side for p in parts for side in _dash_sides(p, gone)]
    parts = _it_named([q for p in parts for q in _split_verbs(p, gone)])
    plain = [p for p in parts if p.strip() and not _NEGATED.search(p)]
    keep = [p for p in plain if not any(holds_value(p, g) for g in gone)] \
        or [p for p in plain if not any(names(p, g) for g in gone)]  # "a climbing gym" is not "Gold's Gym"
    changed = [p for p in keep if has_cjk(p) and re.search(_ZH_CHANGE_VERB + r"|改用|换用|改回|换回", p)]
    if changed:  # 我跳槽到美团了，还是做算法: the clause with the verb of change holds the new value
        keep = changed[:1]
    own = [p for p in keep if not has_cjk(p) and re.search(r"\bI\b|\bI'|\b(?i:me|my|we|us|our)\b", p)]  # the speaker's
    slotted = [p for p in own if slots(p)] or [p for p in keep if slots(p)]  # ... best one that states a slot
    out = (slotted or own or keep or [text])[-1]
    out = re.sub(r",?\s*\b(?:instead\s+of|rather\s+than)\s+[^,;.]+|,\s*not\s+[^,;.]+$", "", out)  # the old value
    out = _CUE_WORDS.sub("", out)
    out = re.sub(r"^\s*(?:and|but|so|then)\s+", "", out, flags=re.IGNORECASE)
    out = " ".join(out.split()).strip(" ,;")
    return capitalized(out)  # a clause of its own starts a sentence


_NEGATED = re.compile(r"\b(?i:no\s+longer|not|never|any\s*more)\b|n't\b|不再|不.{0,4}了|离开|别(?!人|的|处)")


def _dash_sides(clause: str, gone: list[str]) -> list[str]:
    """A clause cut at a dash between words when one side is the old value's ("no longer at st mary's — I've been
    working at the royal free"); else the clause whole ("just Sasha is fine - that's what everyone calls me")."""
    sides = [x for x in re.split(r"\s[-–—]+\s", clause) if x.strip()]
    if len(sides) > 1 and any(_NEGATED.search(x) or any(holds_value(x, g) for g in gone) for x in sides):
        return sides
    return [clause]


_OWN_THING = re.compile(r"\b(?P<p>my|our|the\s+user's|the\s+team's|the\s+project's)\s+(?P<k>[a-z]+)\b", re.IGNORECASE)
_IT_IS = re.compile(r"^(?i:it(?:'s|\s+is))\s+(?:(?i:now)\s+)?(?P<v>(?i:an?)\s+.+|(?:the\s+)?[A-Z0-9].*)$")  # a value, not "it's been"


def _it_named(parts: list[str]) -> list[str]:
    """Clauses with "it's Y" after a clause naming one's own thing ("changed my name - it's Jordan now", "upgraded my
    phone, it's a Pixel 8 now") read as "my name is Jordan now": the thing "it" stands for, with its new value."""
    out = list(parts)
    for i in range(1, len(out)):
        m, owned = _IT_IS.match(out[i].strip()), list(_OWN_THING.finditer(out[i - 1]))
        if m and owned:
            thing = owned[-1]
            out[i] = f"{thing.group('p')} {thing.group('k')} is {m.group('v')}"
    return out


def names(text: str, value: str) -> bool:
    """Whether ``text`` holds ``value`` whole (stricter than ``holds_value``)."""
    return re.search(rf"(?<!\w){re.escape(value)}(?!\w)", text, re.IGNORECASE) is not None


def _split_verbs(clause: str, gone: list[str]) -> list[str]:
    """A clause naming a gone value with a second verb after "and" ("I quit Spotify and joined Netflix"): two clauses,
    the second with the first's subject ("I joined Netflix"); else the clause."""
    m = re.match(r"^(?P<s>(?:\w+\s+){0,3}?(?:I|we|the\s+user|the\s+team))\s+(?P<a>.+?)\s+and\s+(?P<b>(?!(?:I|we|the)\b)[a-z].+)$",
                 clause, re.IGNORECASE)
    if not m or not any(holds_value(m.group("a"), g) for g in gone) \
            or any(names(m.group("b"), g) for g in gone):
        return [clause]
    subject = re.sub(r"^.*?\b(I|we|the\s+user|the\s+team)$", r"\1", m.group("s"), flags=re.IGNORECASE)
    return [f"{m.group('s')} {m.group('a')}", f"{subject} {m.group('b')}"]


#: A forget request that names a slot, not its value ("forget where I live", "forget my job", 忘记我住在哪).
_ASKED_EN = [
    ("home", re.compile(r"^(?:where\s+(?:I|we)\s+(?:live|am\s+based|'m\s+based|am\s+living|'m\s+living)|"
                        r"(?:my\s+)?(?:home|address|home\s+town|city))\W*$", re.IGNORECASE)),
    ("employer", re.compile(r"^(?:where\s+I\s+work|who\s+I\s+work\s+for|(?:my\s+)?(?:employer|company|workplace))\W*$",
                            re.IGNORECASE)),
    ("age", re.compile(r"^(?:my\s+)?(?:age|birth\s*year)|^how\s+old\s+I\s+am", re.IGNORECASE)),
    ("name", re.compile(r"^(?:what\s+I'?m\s+called|what\s+(?:I\s+am|to)\s+call(?:ed)?(?:\s+me)?|(?:my\s+)?name)\W*$",
                        re.IGNORECASE)),
    ("role", re.compile(r"^(?:what\s+I\s+do(?:\s+for\s+a\s+living)?|(?:my\s+)?(?:job|role|job\s+title|profession|"
                        r"occupation))\W*$", re.IGNORECASE)),
]
_ASKED_ZH = [("home", re.compile(r"^我?(?:住在?哪|的住址|的家)")), ("age", re.compile(r"^我?的?(?:年龄|岁数)|^我?多大")), ("employer", re.compile(r"^我?(?:在哪(?:里|儿)?(?:工作|上班)|的公司)")),
             ("name", re.compile(r"^我?(?:的名字|叫什么)")), ("role", re.compile(r"^我?的(?:职业|工作)$"))]


def asked_kind(target: str) -> str | None:
    """The slot kind a forget request names without its value ("where I live" -> home), or None."""
    for kind, pat in _ASKED_ZH if has_cjk(target) else _ASKED_EN:
        if pat.search(target.strip(" .。!！")):
            return kind
    return None
