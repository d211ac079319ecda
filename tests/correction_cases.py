"""The correction cases (issue 21, item 2): natural wordings, EN and ZH, each ending in one value.

``CASES`` are the tuning set (the issue's failing examples first); the held-out set is in
``tests/processors/test_corrections_heldout.py`` and was written at the same time, before any tuning.
"""

from tests.memory_pipeline import Case

ISSUE = [
    Case("version upgrade", ("We use Postgres 15 for the main database.",
                             "We upgraded the database to Postgres 16 last week."), "Postgres 16", "Postgres 15"),
    Case("moved to", ("I live in Berlin.", "I moved to Lisbon last month."), "Lisbon", "Berlin"),
    Case("actually call me", ("Call me Sam.", "Actually, call me Samantha from now on."), "Samantha", "Sam"),
    Case("left X, work at Y", ("I work at Google.", "I left Google and I work at Stripe now."), "Stripe", "Google"),
    Case("not X anymore, Y now", ("I live in Berlin.", "I don't live in Berlin anymore, I live in Lisbon now."),
         "Lisbon", "Berlin"),
    Case("partial forget keeps the name", ("My name is Sam and I'm a product manager.",
                                           "Forget that I'm a product manager."), "Sam", "product manager"),
]

OWN = [
    Case("joined", ("I work at Acme as a designer.", "I joined Globex last month."), "Globex", "Acme"),
    Case("job these days", ("I'm a software engineer by training.", "I'm a data scientist these days."),
         "data scientist", "software engineer"),
    Case("migrated from to", ("We deploy the app on Heroku.", "We migrated the app from Heroku to Fly.io."),
         "Fly.io", "Heroku"),
    Case("switched to, same purpose", ("We use npm for package management.",
                                       "We switched to pnpm for package management."), "pnpm", "npm"),
    Case("preference reversal", ("I prefer tabs over spaces.", "Actually I prefer spaces over tabs now."),
         "spaces over tabs", "tabs over spaces"),
    Case("no longer, habit", ("I drink coffee every morning.",
                              "I no longer drink coffee, I drink tea every morning now."), "tea", "coffee"),
    Case("favorite these days", ("My favorite editor is Vim.", "My favorite editor is Emacs these days."),
         "Emacs", "Vim"),
    Case("replaced with", ("We run the tests with Jest.", "We replaced Jest with Vitest."), "Vitest", "Jest"),
    Case("target version", ("The project targets Python 3.10.", "The project targets Python 3.12 now."),
         "3.12", "3.10"),
    Case("relocated", ("I live in Paris.", "I relocated to Montreal in June."), "Montreal", "Paris"),
    Case("new manager", ("My manager is Alice.", "My new manager is Priya."), "Priya", "Alice"),
    Case("schedule", ("I work from home on Fridays.", "I work from the office on Fridays now."), "office", "home"),
    Case("meeting moved", ("Our standup is at 9am.", "Our standup moved to 10am."), "10am", "9am"),
    Case("switched from to", ("I use VS Code for editing.", "I switched from VS Code to Zed."), "Zed", "VS Code"),
    Case("diet", ("I am a vegetarian.", "I'm vegan now, not vegetarian."), "vegan", "vegetarian"),
    Case("sold and now", ("I drive a Toyota Corolla.", "I sold my Corolla and now I drive a Tesla."),
         "Tesla", "Corolla"),
    Case("upgraded my", ("My phone is an iPhone 12.", "I upgraded my phone to an iPhone 15."), "iPhone 15",
         "iPhone 12"),
    Case("gave up", ("I'm learning Spanish.", "I gave up Spanish and I'm learning Japanese now."), "Japanese",
         "Spanish"),
    Case("based in", ("I'm based in Toronto.", "I'm based in Vancouver these days."), "Vancouver", "Toronto"),
    Case("runs now", ("We use MySQL 5.7 in production.", "Production runs MySQL 8 now."), "MySQL 8", "5.7"),
    Case("go by", ("I go by Alex.", "Please call me Alexandra from now on."), "Alexandra", "Alex"),
    Case("no longer work for", ("I work for the city council.",
                                "I no longer work for the city council; I'm freelancing now."),
         "freelancing", "city council"),
    Case("partial forget employer", ("I'm a product manager at Shopify.", "Forget that I work at Shopify."),
         "product manager", "Shopify"),
    Case("partial forget home", ("I live in Oslo and I have two cats.", "Forget that I live in Oslo."),
         "two cats", "Oslo"),
    Case("moved team chat", ("We use Slack for team chat.", "We moved team chat from Slack to Discord."),
         "Discord", "Slack"),
    Case("switched my", ("My email provider is Gmail.", "I switched my email to Fastmail."), "Fastmail", "Gmail"),
    Case("prefer these days", ("I prefer dark mode in every app.", "These days I prefer light mode in every app."),
         "light mode", "dark mode"),
    Case("temporary office", ("Until Friday I'm working from the Madrid office.",
                              "I'm back at the Berlin office now."), "Berlin", "Madrid"),
    Case("three statements", ("I live in Rome.", "I moved to Milan.", "I moved to Turin this spring."),
         "Turin", "Milan"),
    Case("called now", ("Everyone calls me Liz.", "I'm called Elizabeth now."), "Elizabeth", "Liz"),
    Case("changed jobs", ("I'm a barista at a small cafe.", "I changed jobs and I'm a baker now."), "baker",
         "barista"),
    Case("we now use", ("We use Poetry to manage dependencies.", "We now use uv to manage dependencies."),
         "uv", "Poetry"),
    Case("hosted on", ("We host the docs on Read the Docs.", "We host the docs on GitHub Pages now."),
         "GitHub Pages", "Read the Docs"),
    Case("working at now", ("I'm working at IBM.", "I'm at Red Hat now."), "Red Hat", "IBM"),
]

ZH = [
    Case("zh moved", ("我住在北京。", "我上个月搬到上海了。"), "上海", "北京"),
    Case("zh left job", ("我在阿里巴巴工作。", "我已经离开阿里巴巴了，现在在字节跳动工作。"), "字节跳动", "阿里巴巴"),
    Case("zh name", ("我叫小明。", "以后叫我大明。"), "大明", "小明"),
    Case("zh database", ("我们用 MySQL 做数据库。", "我们把数据库换成了 PostgreSQL。"), "PostgreSQL", "MySQL"),
    Case("zh habit", ("我喜欢喝咖啡。", "我现在不喝咖啡了，改喝茶。"), "茶", "咖啡"),
    Case("zh editor", ("我用 Vim 写代码。", "我改用 VS Code 写代码了。"), "VS Code", "Vim"),
    Case("zh job", ("我是一名老师。", "我现在是一名律师。"), "律师", "老师"),
    Case("zh partial forget", ("我叫小红，我是产品经理。", "忘记我是产品经理。"), "小红", "产品经理"),
    Case("zh version", ("这个项目用 Node 18。", "这个项目升级到了 Node 20。"), "Node 20", "Node 18"),
    Case("zh city no longer", ("我住在成都。", "我不再住在成都了，我现在住在重庆。"), "重庆", "成都"),
]

#: Round two (tuning): forgetting a slot by name, promotions, the project's own things, a stay that ends, 喜欢.
ROUND_2 = [
    Case("forget where I work", ("I'm a chef and I work at Nobu.", "Forget where I work."), "chef", "Nobu"),
    Case("promoted to", ("I'm an associate at the firm.", "I was promoted to partner last month."), "partner",
         "associate"),
    Case("the service runs", ("The service runs Kafka 2.8.", "The service runs Kafka 3.6 now."), "Kafka 3.6",
         "Kafka 2.8"),
    Case("staying then back home", ("I'm staying in Rome this week.", "I'm back home in Naples now."), "Naples",
         "Rome"),
    Case("zh like to eat", ("我喜欢吃面条。", "我现在更喜欢吃米饭。"), "米饭", "面条"),
]

#: Round three (tuning, read while fixing): name changes, "used to", "instead of", "left X for", nicknames, a
#: temporary state that ends with "back", Chinese likes in Latin letters, Chinese ages.
ROUND_3 = [
    Case("changed my name", ("My name is Laura Smith.", "I changed my name to Laura Brown."), "Brown", "Smith"),
    Case("no longer role", ("I'm a lecturer at Leeds University.", "I'm no longer a lecturer; I'm a consultant now."),
         "consultant", "lecturer"),
    Case("used to", ("I use Arch Linux on my laptop.", "I used to use Arch Linux, now it's Fedora on my laptop."),
         "Fedora", "Arch"),
    Case("these days version", ("We run Ruby 2.7.", "These days we run Ruby 3.3."), "3.3", "2.7"),
    Case("start date", ("I start at Globex on Monday.", "Actually, I start at Initech on Monday, not Globex."),
         "Initech", "Globex"),
    Case("went back", ("I use Windows at home.", "I went back to Linux at home."), "Linux", "Windows"),
    Case("zh prefer tool", ("我更喜欢用 Vim。", "其实我现在更喜欢用 Helix。"), "Helix", "Vim"),
    Case("zh no longer at", ("我在网易工作。", "我不在网易了，现在在携程。"), "携程", "网易"),
    Case("we now deploy", ("We deploy to Kubernetes.", "We now deploy to Nomad instead of Kubernetes."), "Nomad",
         "Kubernetes"),
    Case("switched over", ("Our docs are built with Sphinx.", "We switched the docs over to MkDocs."), "MkDocs", "Sphinx"),
    Case("left for", ("I'm at Acme Corp.", "I left Acme Corp for a startup called Nimbus."), "Nimbus", "Acme"),
    Case("nickname", ("Friends call me Matt.", "These days friends call me Matteo."), "Matteo", "Matt"),
    Case("temp until", ("I'm working remotely until June.", "I'm back in the office now."), "office", "remotely"),
    Case("favorite", ("My favorite language is Rust.", "My favorite language is Zig now."), "Zig", "Rust"),
    Case("zh now use", ("我用 Chrome 浏览器。", "我现在改用 Firefox 浏览器了。"), "Firefox", "Chrome"),
    Case("zh forget age", ("我叫陈静，今年28岁。", "忘记我的年龄。"), "陈静", "28"),
]

CASES = ISSUE + OWN + ZH + ROUND_2 + ROUND_3
