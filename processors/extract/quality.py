"""Which sentences of a conversation between people make no fact worth reading later (issue 21, judged quality).

The offline extractor scores a sentence by what kind of statement it is; this module owns the
classes a harsh reader of the kept facts marks as trivial or junk, whatever words fill them:

* ``mood``: the main clause is how the speaker (or their family) feels, with nothing named in it
  ("I'm stoked I made a difference", "My kids are so excited about summer break"), a feeling
  about what the other person told ("I'm glad Toby is happy"), a guess or a good time ("I'm sure the crowd will be pumped", "I'm really enjoying the progress");
* ``echo``: it only makes sense beside what the other person said (and ``agrees``: a short "I'm a
  fan too!", judged before ``offline`` cuts its "too") ("My dogs are like that too",
  "Same here", "Mine does that as well", "Almost as funny as when ...", "I'm sorry to hear about Max");
* ``vague``: what it is about has no name ("I visited a place that holds a lot of memories",
  "I went to a cool event last week", "I drove somewhere fun");
* ``referent``: it points at a thing shown or said a moment ago ("I'm loving this recipe", "I
  took that pic on a hike");
* ``outing``: a one-off leisure moment with nothing durable in it ("I went for a stroll on
  Friday", "We took the kids to the park", "We hosted a small get-together", "I went bowling",
  "I had a great night out", "I hung out with friends"): a walk, a ride, a trip to a park or a
  beach, a get-together, "went <doing>", a good time, with at most one proper noun.
* ``meta``: talk about the chat itself: a photo shown or taken, someone introduced ("this is Max");
* ``referent`` too: "The views were spectacular" (the thing the chat was on); a verb with nothing but a time after it ("I'm starting next month");
* ``fragment``: a dependent clause alone ("Since we had a kiddo around", left when "It's been a while" was cut);
* ``referent`` also: a feeling about a thing pointed at ("I'm loving this job"), what ``referents.lost_referent`` finds (a thing pointed at, a bare "it");
* ``we``: "we" with nobody named (``referents.unresolved_we``): "X says they went ..." tells no one.

``weak_reason(sentence, proper)`` gives the class, or None; ``proper`` is the sentence's proper
nouns other than the speakers'. Only a named speaker's sentences (a conversation between people)
are judged this way: what a user tells a coding agent is kept by its own rules.

Not judged here, though a reader marks it: "we" with no one named ("We actually met in class"
becomes "Jolene says they actually met ..."); dropping those cost 1.6 points of LoCoMo coverage,
which would fall below the 40% the issue keeps.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from processors.extract import referents
from processors.extract.text import capitalized

#: Talk about the chat itself: a photo shown or taken ("I shared a photo of ...", what ``offline._photo`` makes of
#: "Here's a pic of ...", "I took that pic on a hike"), someone introduced to the other person ("this is Max"), a
#: reply about the chat ("I forgot to mention ...", "I'm in for the hike").
_META = re.compile(r"^I\s+shared\s+a\s+photo\b|\bthis\s+is\s+(?:(?-i:[A-Z])|my\b|our\b)|(?<!to\s)\bmeet\s+(?-i:[A-Z])|"
                   r"\b(?:pic|pics|photo|photos|picture|pictures|snap|snapshot|selfie|screenshot|screenshots)\b|"
                   r"\bforgot\s+to\s+(?:mention|tell|say|ask)\b|^I'?m\s+(?:so\s+|totally\s+)?(?:in|down)\s+for\b|"
                   r"\bcount\s+me\s+in\b", re.IGNORECASE)

_FEEL = referents.FEEL
#: The speaker's feeling as the main verb ("I feel a strong urge to help", "I felt so at home there"): how it felt,
#: not what happened; "I feel like <doing>" is a wish, and stays.
_FEEL_VERB = re.compile(r"^I\s+(?:(?:\w+ly|still|always|just|also|do|really|sometimes|often)\s+)*(?:feel|felt)\b"
                        r"(?!\s+like\s+\w+ing\b)", re.IGNORECASE)
_MOOD = re.compile(
    r"^(?:I|we|my\s+(?:\w+\s+)?\w+|our\s+(?:\w+\s+)?\w+)(?:'m|'re|'s|\s+am|\s+are|\s+is|\s+was|\s+were|\s+feel|\s+felt|"
    r"\s+have\s+been|\s+has\s+been|'ve\s+been)(?:\s+(?:so|really|super|very|truly|pretty|also|just|totally|getting|"
    rf"feeling|kinda|a\s+bit|quite|all|both|still))*\s+{_FEEL}\b", re.IGNORECASE)
_ECHO = re.compile(
    r"\blike\s+(?:that|this|yours|you|them)\s+(?:too|as\s+well)\b|\b(?:same|me)\s+(?:here|too)\b|"
    r"\b(?:that|this|it|them|those)\s+(?:too|as\s+well)\s*[.!]*$|^(?:mine|ours)\b|\bjust\s+like\s+(?:you|yours)\b|"
    r"^(?:almost\s+|just\s+|about\s+|nearly\s+)?as\s+\w+\s+as\b|\b(?:sorry|glad|happy|sad)\s+to\s+hear\b|\bsorry\s+about\b",
    re.IGNORECASE)
_VAGUE_THING = re.compile(
    r"\b(?:a|an|some)\s+(?:(?:really|super|very|pretty)\s+)?(?:\w+\s+)?(?:place|spot|event|thing|activity|stuff)\s+"
    r"(?:that|which|where|who)\b|\b(?:a|an|some)\s+(?:(?:really|super|very|pretty)\s+)?(?:cool|nice|great|fun|"
    r"amazing|awesome|special|new|interesting|lovely|fantastic)\s+(?:event|place|spot|thing|activity)\b", re.IGNORECASE)
_SOMEWHERE = re.compile(r"\b(?:somewhere|someplace|a\s+place\s+(?:in|near|by|outside)|some\s+place)\b|"
                        r"\bsomething\s+(?:\w+\s+)?(?:happened|came\s+up|went\s+down)\b(?![^.!?]*(?:\s-+\s|:|[\u2013\u2014]))",
                        re.IGNORECASE)  # what happened is not told ("something happened on my project")
#: A past participle with no subject before it ("Hooked a new RPG that I've been playing"): a reply's fragment.
_NO_SUBJECT = re.compile(r"^(?-i:[A-Z])[a-z]+ed\s+(?:a|an|the|my|our|some|this|that|on|up|into)\b", re.IGNORECASE)
#: A thing pointed at ("this recipe", "that pic"): shown or said a moment ago, never named.
#: A feeling about a thing pointed at ("I'm loving this job", "I love these"): what it is was said or shown before.
_FELT_POINTED = re.compile(r"\b(?:loving|love|loved|enjoying|enjoy|enjoyed|digging|like|liked)\s+(?:this|that|these|those)"
                           r"\s+(?!(?:week|weekend|month|year|morning|evening|time|kind|sort|type)\b)[a-z]", re.IGNORECASE)
#: A clause that hangs from a main clause the sentence lost ("Since we had a kiddo around", "Because it rained").
_DEPENDENT_ONLY = re.compile(r"^(?:since|because|cause|'cause|although|though|unless|whereas)\s+(?:(?:my|our|the)\s+\w+\s+and\s+I|"
                             r"I|we|you|he|she|they|it|my|our|the)\b(?![^,;:]*\b(?:I|we)\b)[^,;:]*$", re.IGNORECASE)
#: A verb with no object, only a time ("I'm starting next month", "I've been playing for a month now"): what is
#: started or played was said before.
_BARE_DOING = re.compile(r"^(?:I|we)(?:'m|\s+am|'re|\s+are|'ve\s+been|\s+have\s+been)\s+(?:just\s+|finally\s+|only\s+)?"
                         r"[a-z]+ing(?:\s+(?:for|in|since|next|last|this|a|an|the|about|now|soon|today|tomorrow|tonight|"
                         r"week|weekend|month|year|years|months|weeks|days|day|couple|few|of|again|already|\d+)\b)*"
                         r"\s*(?:[.!,]*$|[,;]\s+(?:and\s+|but\s+)?(?:it|that|this)(?:'s|\s+(?:is|was|has))\b)", re.IGNORECASE)
#: ... and its past: "I started a few days ago", "We finished last week": started what was said before.
_BARE_DONE = re.compile(r"^(?:I|we)\s+(?:just\s+|finally\s+|only\s+)?(?:started|began|finished|stopped|quit|joined|left)"
                        r"(?:\s+(?:for|in|since|next|last|this|a|an|the|about|ago|few|couple|of|again|already|week|weekend|"
                        r"month|year|years|months|weeks|days|day|\d+)\b)*\s*[.!,]*$", re.IGNORECASE)
#: "I wanted to make connections", "I wanted the painting to feel calm": a wish of that moment, not what happened
#: (a long-held one, "I've always wanted to ...", is a goal and stays).
_PAST_WISH = re.compile(r"(?:^|,\s*(?:so|and|but)\s+|^(?:\w+\s+){1,5}?)I\s+(?:just\s+|really\s+)?wanted\s+"
                        r"(?:to|the|a|an|my|some)\b(?!.*\b(?:since|as\s+a\s+(?:kid|child)|growing\s+up|for\s+years|"
                        r"when\s+I\s+was)\b)", re.IGNORECASE)
#: "The views were spectacular", "The game was called ...": a sentence about "the <thing>" the chat was just on.
_DEFINITE_OPENING = re.compile(r"^The\s+(?!last\b|first\b|next\b|only\b|best\b|whole\b)(?:[a-z][\w-]*\s+){1,3}?"
                               r"(?:was|were|is|are|has|have|had|always|really|just|got|went|made|remind|reminds)\b")
_POINTED = re.compile(r"\b(?:this|that|these|those)\s+(?:(?:\w+\s+)?(?:pic|pics|photo|photos|picture|pictures|shot|snap)|"
                      r"recipe|one|ones|stuff|thing|things)\b(?!\s+(?:of|called|named|from|at|in)\b)", re.IGNORECASE)
_HEDGE = re.compile(r"^I(?:'m|\s+am)\s+(?:so\s+|pretty\s+|really\s+)?(?:sure|certain|positive)\b|^I\s+bet\b|"
                    r"^I(?:'m|\s+am)\s+(?:really\s+|so\s+|just\s+)?(?:enjoying|loving|digging)\s+(?:the|my|all|every)\s+"
                    r"(?:progress|vibes?|moment|time|ride|journey|process)\b", re.IGNORECASE)
_OUTING = re.compile(
    r"\b(?:went|go|going|gone)\s+(?:out\s+)?(?:for|on)\s+(?:a|an)\s+(?:\w+\s+)?(?:stroll|walk|run|jog|bike\s+ride|ride|"
    r"drive|picnic|hike|swim|coffee|drink|drinks|dinner|lunch|brunch)\b|"
    r"\b(?:took|take|taking|brought)\s+(?:the\s+kids|my\s+\w+|our\s+\w+|[A-Z]\w+|them|her|him)\s+to\s+(?:the|a)\s+"
    r"(?:park|beach|playground|zoo|pool|mall|movies|museum|aquarium|fair|carnival|arcade|cinema|lake|farm)\b|"
    r"\b(?:went|go|going)\s+to\s+(?:a|an|the)\s+(?:\w+\s+){0,2}?(?:concert|festival|show|party|gala|reading|game|match|"
    r"fair|gig|movie|play|musical|screening)\b|"
    r"\b(?:hosted|had|threw)\s+(?:a|an)\s+(?:\w+\s+)?(?:get-together|gathering|barbecue|bbq|picnic)\b|"
    r"\bwent\s+(?:out\s+)?(?!(?:to|on|through|back|home)\b)\w+ing\b|"  # "went hiking", "went bowling": a pastime, once
    r"\b(?:had|having|have)\s+(?:a|an|such\s+a)\s+(?:\w+\s+){0,2}?(?:time|night|day|weekend|evening|blast|experience)\b|"
    r"\b(?:hung|hanging|hang)\s+out\b|\bcaught\s+up\s+with\b|\b(?:chilled|chilling|skyped|relaxed|recharged)\b",
    re.IGNORECASE)


#: What someone is to the speaker's feelings rather than what they did: "My family is my motivation", "They keep me
#: going", "My friends are always there for me", "It means a lot": a sentiment about support, true of anyone.
_SUPPORT = re.compile(
    r"\bkeeps?\s+(?:me|us)\s+(?:going|motivated|on\s+track|grounded|sane|inspired|positive|moving|strong)\b|"
    r"\b(?:is|are|'s|'re)\s+(?:always\s+|really\s+)?(?:my|our)\s+(?:\w+\s+)?(?:motivation|rocks?|inspiration|"
    r"everything|world|strength|anchor|source\s+of\s+\w+)\b|"
    r"\b(?:is|are|'s|'re)\s+(?:what's\s+)?driving\s+(?:me|us)\b|\b(?:is|are|'s|'re)\s+always\s+there\s+for\s+(?:me|us)\b|\bhelped\s+(?:me|us)\s+(?:get\s+)?through\b|\bmeans?\s+(?:a\s+lot|so\s+much|the\s+world|everything)\b",
    re.IGNORECASE)
#: The speaker turning something over in their mind ("I'm still thinking about Max", "Lately I've been thinking about
#: my career", "I've been spending time remembering my mom"): a mood, unless a plan follows ("thinking of moving").
_RUMINATION = re.compile(
    r"(?:^(?:\w+ly,?\s+)?|,\s*)I(?:'m|\s+am|'ve\s+been|\s+have\s+been)\s+(?:(?:\w+ly|always|still|also|just|a\s+lot)\s+)*"
    r"(?:spending\s+(?:some\s+)?time\s+)?(?:thinking|remembering|reflecting|wondering)\s+(?:a\s+lot\s+)?"
    r"(?:(?:about|of|on)\s+(?!\w+ing\b)|(?=(?-i:[A-Z])|(?:my|our|his|her|their|the|what|where|how|who|why)\b))", re.IGNORECASE)
#: How the speaker copes, not what happened: "I'm hoping for the best", "I'm trying to stay positive", "I'm powering
#: through", "I'm taking the time to reflect".
_COPING = re.compile(
    r"\bhoping\s+for\s+the\s+best\b|\bpowering\s+through\b|\b(?:trying|try)\s+to\s+(?:stay|keep|remain)\s+"
    r"(?:positive|upbeat|strong|focused|calm|motivated|optimistic|sane|busy)\b|\btaking\s+(?:the|some)\s+time\s+to\s+"
    r"(?:reflect|breathe|recharge|relax)\b|\bfocusing\s+on\s+the\s+positive\b|\binto\s+the\s+unknown\b|"
    r"\bone\s+day\s+at\s+a\s+time\b", re.IGNORECASE)
#: A work the speaker reads, plays or watches, never named ("I'm reading a book that really captivates me", "I'm
#: playing this new RPG"): which one is what a reader would need.
_UNNAMED_WORK = re.compile(
    r"^I(?:'m|\s+am|'ve\s+been|\s+have\s+been)?\s+(?:(?:\w+ly|just|still|also|really|finally)\s+)*(?:reading|playing|watching|"
    r"listening\s+to|rereading|read|played|watched|saw|listened\s+to|finished)\s+(?:a|an|this|some)\s+(?:[\w-]+\s+){0,2}?(?:book|novel|game|movie|film|show|series|"
    r"song|album|podcast|RPG)s?\b", re.IGNORECASE)
#: "I got the idea from a walk", "I taught myself", "I achieved so much more than I imagined", "the Harry Potter
#: stuff", "I've learned a lot": what the idea, the skill, the stuff or the lesson is was said before.
_UNSAID = re.compile(
    r"\bthe\s+idea\b(?!\s+(?:of|for|to|that|about)\b)|\b(?:taught|pushed|challenged)\s+myself\s*(?:[,.!;]|$|but\b|and\b)|"
    r"\bmore\s+than\s+I\s+(?:imagined|expected|thought|hoped)\b|\bstuff\b|"
    r"\blearned\s+(?:so\s+)?(?:a\s+lot|so\s+much)\b(?!\s+(?:about|from|of|on|how|in)\b)", re.IGNORECASE)
#: A feeling with its cause ("I'm inspired seeing my work make a difference for the LGBTQ+ community", "I'm proud
#: knowing ..."): a mood even when the cause names something.
_FELT_CAUSE = re.compile(
    rf"^I(?:'m|\s+am|\s+was|\s+feel|\s+felt|'ve\s+been)(?:\s+(?:so|really|super|very|truly|just|always|also))*\s+{_FEEL}\s+"
    r"(?:seeing|knowing|hearing|watching|to\s+see|to\s+know|to\s+hear|when|how|that)\b", re.IGNORECASE)
#: "My family is awesome", "Our team is the best": the speaker praising their own people or things.
_PRAISE = re.compile(
    r"^(?:my|our)\s+(?:\w+\s+)?\w+\s+(?:is|are|'s|'re|has\s+been|have\s+been)\s+(?:(?:so|really|super|just|always|"
    r"truly|absolutely)\s+)*(?:awesome|amazing|great|the\s+best|wonderful|incredible|fantastic|supportive|everything|"
    r"the\s+greatest)\b", re.IGNORECASE)
#: "I'm a huge fan!": a fan of what the other person named.
_BARE_FAN = re.compile(r"\b(?:a|an)\s+(?:(?:huge|big|total|massive|great|real|die-hard|true)\s+)?fan\s*[.!]*$",
                       re.IGNORECASE)
#: "I even got a physical copy", "My kids even made their own": "even" adds to what was just told, which is lost.
_EVEN = re.compile(r"^(?:I|we|my\s+\w+(?:\s+and\s+I)?)\s+(?:\w+\s+)?even\s+(?!though\b|if\b|when\b|more\b)",
                   re.IGNORECASE)


_AGREES = re.compile(r"\b(?:too|as\s+well)\s*[.!]*$", re.IGNORECASE)
#: "I'm glad Toby is happy", "So happy your trip went well": a feeling about what the other person told.
_GLAD_THAT = re.compile(r"^(?:I'?m\s+|I\s+am\s+|so\s+)?(?:(?:so|really|super|very)\s+)?(?:glad|happy|sorry|thrilled|relieved|"
                        r"proud)\s+(?:that\s+)?(?:\w+\s+){1,3}?(?:is|are|was|were|has|have|had|did|got|made|could|can|"
                        r"went|liked|loved|enjoyed)\b", re.IGNORECASE)


#: Where a sentence's clause ends and another with its own subject begins ("I'm so excited, I opened my shop", "I was
#: in Rio three years ago, I took a photo on a tour", "I'm tied up with stuff lately, yesterday I came back from ...").
_CLAUSE_BREAK = re.compile(r"(?:,|\s+-+|\s*[\u2013\u2014]|;)\s+(?:(?:and|but|so|then|plus)\s+)?"
                           r"(?=(?:(?:yesterday|today|last\s+\w+|this\s+\w+)\s+)?(?:I|I'm|I've|my|we|we're|our)\b)",
                           re.IGNORECASE)


#: A clause that tells a feeling in any form ("a mix of excited and scared", "a feeling of gratitude", "my mood is
#: terrible", "we had lots of fun"): no clause to keep in place of a weak sentence.
_FELT = re.compile(rf"\b(?:{_FEEL}|feel|feels|felt|feeling|feelings|mood|fun|memories|vibes?)\b", re.IGNORECASE)


def strong_clause(sentence: str, proper_of: Callable[[str], list[str]]) -> str | None:
    """For a weak ``sentence``, its first clause with a subject of its own that is not weak and says enough (five
    words or more): the news beside a mood or a photo ("I'm so excited, I opened my car shop last week!" -> "I opened
    my car shop last week!"); None when ``sentence`` is not weak or no clause stands (a clause telling a feeling
    never does). ``proper_of`` gives a text's
    proper nouns (as ``weak_reason`` takes them)."""
    if weak_reason(sentence, proper_of(sentence)) is None:
        return None
    cuts = [0, *(m.end() for m in _CLAUSE_BREAK.finditer(sentence))]
    ends = [m.start() for m in _CLAUSE_BREAK.finditer(sentence)] + [len(sentence)]
    for start, end in zip(cuts, ends, strict=True):
        clause = sentence[start:end].strip(" ,;-")
        if len(clause.split()) >= 6 and not _FELT.search(clause) and weak_reason(clause, proper_of(clause)) is None:
            return capitalized(clause)
    return None


def agrees(sentence: str, proper: list[str]) -> bool:
    """Whether ``sentence`` (as said, before its tail is cut) only agrees with the other speaker: at most 10 words
    ending in "too" / "as well" with no name in them ("I'm a big fan of being outside too!")."""
    s = sentence.strip()
    return bool(_AGREES.search(s)) and not proper and len(s.split()) <= 10


def weak_reason(sentence: str, proper: list[str]) -> str | None:
    """The class of weak sentence ``sentence`` is, or None (see the module docstring); ``proper``: its proper nouns
    other than the speakers' names."""
    s = sentence.strip()
    if _ECHO.search(s):
        return "echo"
    if (_MOOD.match(s) or _FEEL_VERB.match(s)) and not proper:
        return "mood"
    if _GLAD_THAT.match(s) or _SUPPORT.search(s) or _RUMINATION.search(s) or _COPING.search(s) \
            or _FELT_CAUSE.match(s) or _PRAISE.match(s):
        return "mood"
    if _BARE_FAN.search(s) or _EVEN.match(s) or _UNSAID.search(s):
        return "referent"
    if _UNNAMED_WORK.match(s) and not proper and '"' not in s:
        return "vague"
    if (_VAGUE_THING.search(s) and not proper) or _SOMEWHERE.search(s):
        return "vague"
    if _POINTED.search(s) or _FELT_POINTED.search(s) or _DEFINITE_OPENING.match(s):
        return "referent"
    if _DEPENDENT_ONLY.match(s.rstrip(".!")) or _NO_SUBJECT.match(s):
        return "fragment"
    if _BARE_DOING.match(s) or _BARE_DONE.match(s):
        return "referent"
    if _HEDGE.match(s) or _PAST_WISH.search(s):
        return "mood"
    if _OUTING.search(s) and len(proper) <= 1:
        return "outing"
    if _META.search(s):
        return "meta"
    if referents.lost_referent(s):
        return "referent"
    if referents.unresolved_we(s):
        return "we"
    return None
