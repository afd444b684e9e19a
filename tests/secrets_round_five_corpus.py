"""Seven more corpora for the secrets detector, written this round by seven writers who read
neither its rules nor the other corpora, each measured when it came, on the rules of then: of
the secrets the third refused 84.3% (140), the fourth 81.1% (196), the fifth 85.5% (193), the
sixth 96.2% (156), the seventh 91.5% (153), the eighth 89.5% (153) and the ninth 97.6% (205),
with 2.4%, 2.8%, 3.7%, 2.8%, 4.7%, 4.1% and 12.0% of their look-alikes refused. Their misses (a
value before its name or far after it, logins joined to passwords, misspelt and transliterated
words, other countries' identity numbers, keys a few words after their name, door codes that
look like years, a Wi-Fi QR code's text, a lock and what opens it) and refused look-alikes (talk
after "email password", a ticket's, an IMEI's or a barcode's Luhn-valid number, template stand-
ins like "sk_live_xxxx", masked and redacted values, documentation's stand-ins, public keys,
fingerprints and coin addresses, a password's hint, a company's EIN) led to this round's rules,
so they are tuning data now; ``tests/secrets_blind_corpus.py``, written after the last of those
rules, is the honest measure.

Changed from the texts as written: one Turkish IBAN whose check digits are wrong was dropped,
and a company's ten-digit ИНН and two companies' EINs (public, as the detector's rules say)
moved to the look-alikes. Nine look-alikes are still refused by choice: documentation samples
(AWS's example key three times, Stripe's test card twice, a sandbox's test card, jwt.io's
example token), real shapes that the tuning corpus counts as secrets too, and two Tron addresses
whose base-58 checksums fail, so nothing tells them from a random token.
"""

from __future__ import annotations

SECRETS: list[tuple[str, str]] = [
    (
        "provider",
        "Working on the recipe chatbot side project; his OpenAI key for it is "
        "sk-proj-PnBI0zoHPPnOY4gZabCtKcE5YaxqftNQ1iyHbDzJtu0aj4pgDmC87SHVR51SQMOc0u3I"
        "T3BlbkFJnRl45otDv20jwVQKBs2x "
        "— asked me to keep it handy.",
    ),
    (
        "provider",
        "Ключ Anthropic для рабочего бота поддержки: "
        "sk-ant-api03-hGM3kKFOMaER25ywSuCOLvzJOs2eNBRnYXL3BwPvd9loDDA2M1TUWC480vE3x29"
        "7BbVfaX4VotOgFRRmZlPtDI-DMcgLHAA, "
        "Марина просила не светить его в общем чате.",
    ),
    (
        "provider",
        "Dmitri's personal access token for the homelab repo: "
        "ghp_m7jf8dCCrdLBnKlEO8sp5lrkhiqfTXJFsMnK (it expires in March, remind him).",
    ),
    (
        "provider",
        "Для CI в семейном репозитории с фотками завела fine-grained токен "
        "github_pat_DqqPSmKCnzJkX6cgHs4HxZ_5GYOdopC4y0BIXvsMIQOxNA0Ts7XFwI3LMwvgVXGgm"
        "IfR14hvc8RDk6ObN4",
    ),
    (
        "provider",
        "glpat-TS-5kf8WsJHVJ6dGvQta is the GitLab token she uses for the deploy "
        "runner at work, scoped to api + write_repository.",
    ),
    (
        "provider",
        "Токен слак-бота, который шлёт напоминания о дежурствах: "
        "xoxb-2016420679089-3405083415692-9ozRySQjENj1VlTSjVBIWvEQ",
    ),
    (
        "provider",
        "He pasted his Slack user token so I can summarise #design for him: "
        "xoxp-106408287176-3912508556428-9096737590199-0d302d3eac361405867a3bcc8a6e1b"
        "54",
    ),
    (
        "provider",
        "AWS creds for the photo backup bucket — access key AKIAPJ5HMCLMYZEJHCEZ, "
        "secret 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, region eu-west-1.",
    ),
    (
        "provider",
        "Доступ к AWS для видеонаблюдения на даче: AKIAISCVWPTXDQZYUEET / "
        "KTv4QrGVT3vyAXkEoGMMSvVKUr06MGncngmxlyPY, Игорь сам создавал "
        "IAM-пользователя.",
    ),
    (
        "provider",
        "Google Maps key she embedded in the bakery website: "
        "AIzahu2D5MOwZyUhyV_ZrIG25hH-LrN7iDgdtIq — restricted to her domain, she "
        "thinks.",
    ),
    (
        "provider",
        "Ключ Google API для скрипта, который тянет таблицы Олега: "
        "AIza6C0-wyoualC3omGOjNsnmjymJRSQc8FvE-_",
    ),
    (
        "provider",
        "Stripe live secret for the ceramics shop: "
        "sk_live_51AGmcxTCBEr5FSdaDPWuo6ee5aokyCrsEo7iIh06CWAvVKd2qUOObbmNLmtVxLP7AQT"
        "gHqD4P0B2O1FS4oHy4BNlNCw1nVuidU",
    ),
    (
        "provider",
        "Ограниченный ключ Stripe (только чтение платежей) для бухгалтера Нины: "
        "rk_live_lZSMP5sb9ZRSVLJtN9jNkWfw0xEnVKrhC0pRExGjKO34xUTCzCKGJ6mWRdKIiwDTa3Ua"
        "XMrMxgWVoiwS4sMFWcge7Rcut0BRJ6O",
    ),
    (
        "provider",
        "Twilio for the clinic appointment reminders — Account SID "
        "AC5a2c260544d2c1e34694eeb01c0e5dcc, auth token "
        "bf20749855490fb26f430175d0db4d86.",
    ),
    (
        "provider",
        "Для рассылки родительского комитета ключ SendGrid: "
        "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",
    ),
    (
        "provider",
        "Mailgun private API key for the pottery newsletter: "
        "key-f18188d87b44489a39fc882cec24b770 (domain mg.lenapottery.com).",
    ),
    (
        "provider",
        "Токен DigitalOcean, через который Артём поднимает дроплеты для курсовой: "
        "dop_v1_fa6a4c1d3d292e08e16628c0dd3e51dbb9e20e0dd2d79f0d9ca738784731ec7d",
    ),
    (
        "provider",
        "Shopify admin API access token for the sock subscription store: "
        "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",
    ),
    (
        "provider",
        "npm-токен для публикации пакета @kira/ui, на случай если ноут опять умрёт: "
        "npm_XtJlGfMEj8KxhJ4CxP0kZ3T495cjfCn1mB0V",
    ),
    (
        "provider",
        "He uploads his astronomy library with this PyPI token: "
        "pypi-AgEIcHlwaS5vcmc0t9sav3aXG7lG6YiJfYF8vJhFzA7xCkW7HwU5yPzxameLqt8ydEOJBwD"
        "MGEuQk2ZrW7pLx4dNvT9ecY",
    ),
    (
        "provider",
        "Токен Hugging Face с правом записи, им она пушит свои дообученные модели: "
        "hf_VpY0tDVJxvDN4SLBg0OZnzdmYJrkIqs6wc",
    ),
    (
        "provider",
        "Бот, который напоминает бабушке про таблетки, токен от BotFather: "
        "8189303508:AAW6wiwZQB9vf2K08cUmhLk27I2oHnEPJmS",
    ),
    (
        "provider",
        "Telegram bot token for the Sunday five-a-side football group: "
        "327162526:AARcOIWN1dvqd4EJdT6ex1pMe25qFVBc3lz",
    ),
    (
        "provider",
        "Discord bot token for his D&D server dice bot: "
        "ODEwNzgxNDAzMDc5MDY1MDQ5.yB4j9W.4X4JG10BF3e5d-Qm6V3vBuK9cvHYrHMJhOMNiX",
    ),
    (
        "provider",
        "Сохранила админский JWT для тестов, пока не истёк: "
        "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiJ1Xzg4MjEzIiwicm9sZSI6ImFkbWl"
        "uIiwiaWF0IjoxNzE2MjMwNDAwfQ.B2uCAroGnrzfEoLzo4DCwFYoHyB_8A8rhxRmtr4R7PP",
    ),
    (
        "provider",
        "Azure storage for the family photos: "
        "DefaultEndpointsProtocol=https;AccountName=familyphotos;AccountKey=2pXPnZvq6"
        "zdsIK/rPYS7EMlbLY6cbdupSa1drtRpPz9lLf/88x2iU/ju0plKKY7K41V7vDLa1uYseBcK1Ce6Q"
        "b==;EndpointSuffix=core.windows.net",
    ),
    (
        "provider",
        "Секрет приложения в Azure AD для интеграции с Outlook-календарём: "
        "R508Q~95R9d7ko8tg~8ijLyFrjGm1q4iy9zMYerK, действует до ноября.",
    ),
    (
        "provider",
        "Heroku API key he gave me for the staging app: "
        "HRKU-RGiy6CXsOY3B-UYVLw-OjUnq_G57Bs5GVWvejRcw6RRXArMYjOyOFkbQkwov",
    ),
    (
        "provider",
        "Старый ключ Heroku API (ещё в формате uuid): "
        "92084bf2-4691-49bf-8e05-3281cc875779 — Вадим всё собирается его отозвать.",
    ),
    (
        "provider",
        "Datadog for the team dashboards — API key 72ff90bc22189a142ce16cd2c266beee, "
        "application key 8c5b69938910753383f017769d2a14c9148f62b7.",
    ),
    (
        "provider",
        "DSN Sentry для мобильного приложения, с ключом: "
        "https://19d99bd58d86f5f2b54d511de518c7b1@o2370519.ingest.sentry.io/8253840",
    ),
    (
        "provider",
        "Linear personal API key (she automates her sprint reports with it): "
        "lin_api_SM1CS1snlr5EUgkP00UZRz7uZd9ioYJ6HmJG9PvV",
    ),
    (
        "provider",
        "Интеграция Notion для семейного бюджета, internal integration secret: "
        "secret_hKpcxmQfMPHqnCWYXQvQwPJYzyiOmEOXA98YvAMx7vJ",
    ),
    (
        "provider",
        "After rotating, his new Notion integration token is "
        "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",
    ),
    (
        "provider",
        "Токен Vercel для деплоя лендинга Саши из GitHub Actions: "
        "F6gDufF6SG4JV88xzcfme2sd (scope — личный аккаунт).",
    ),
    (
        "provider",
        "Supabase service_role key for the recipe app, bypasses RLS: "
        "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJpc3MiOiJzdXBhYmFzZSIsInJlZiI6InFremJ"
        "tdHJ3cGx4aHl2ZCIsInJvbGUiOiJzZXJ2aWNlX3JvbGUiLCJpYXQiOjE3MDkyNTEyMDAsImV4cCI"
        "6MjAyNDgyNzIwMH0.9slFNNaAKj5NubNAQLQ7g0EXWFTq_7jJEXtOL2DuWwN",
    ),
    (
        "provider",
        "Сервисный токен Doppler для прод-окружения магазина: "
        "dp.st.prd.6jxVOBc3JuBy89SqBcdq5NMa5fDQaEMZn03r49Tyjed",
    ),
    (
        "provider",
        "pul-78348f1da0a4d49cf88043857fe507f36a1e5280 — that's the Pulumi access "
        "token from her work laptop, she copied it before the reinstall.",
    ),
    (
        "provider",
        "API-токен Atlassian для Jira-скриптов Кости: "
        "ATATT3xFfGF0ykotn1r5o_YUZj616KhoS_z4hHd2jmMHCiQcYNB7kxqV7vNK0JqaaRFXv4s06YkS"
        "Chc6hFIYEsJQyJU9HsN1zXBeYV_NPCPfrLzOTsacjishfnDou8fd9QhnVaeJVt-l0IGuluD2895c"
        "SMIDBPuhZSh3I4nzgPCcy7VHf_1j=WJJ0MAXV",
    ),
    (
        "provider",
        "Grafana Cloud service account token for the home-energy dashboard: "
        "glsa_E3CQOIKR0B2OVrTUmiiNsbiqUj2TM6Fa_0800e4b6",
    ),
    (
        "provider",
        "Персональный токен Figma, чтобы скрипт выгружал иконки: "
        "figd_Bhsm0Y5equsGUqkYqoezAqokqd8gdnoALVFH70ej",
    ),
    (
        "provider",
        "Square production access token for the food truck POS: "
        "EAAACwUkSBuFu43UUWPOOD3LivC2golmz1o9aBN8zCt_53cFE9EPMKvERQl7TzmG",
    ),
    (
        "provider",
        "OAuth-токен GitHub, который выдал gh auth token на его маке: "
        "gho_NEnAR8xtH9rHgdFsChNQoqhUUeA7IKGcEVZQ",
    ),
    (
        "provider",
        "Токен приложения Slack (Socket Mode) для бота-опросника: "
        "xapp-1-A0QAIM4MNA-7659124138442-88607e683ef5f4025b444e621bf003f4058d4e426151"
        "71c4f460338d9805d0f8",
    ),
    (
        "provider",
        "Supabase CLI access token, in case he loses the laptop again: "
        "sbp_fc705069baf8ae461e626f335fe2ae84c0dfedf2",
    ),
    (
        "provider",
        "Ключ Hugging Face у Тимура на сервере лаборатории — "
        "hf_E886q9SRgT3qA0YlrmWXV6vhyXq4fPulls, только чтение.",
    ),
    (
        "password",
        "Her Gmail pw is Vermilion!77 — she keeps forgetting it and asked me to "
        "remember it for her.",
    ),
    ("password", "Password for the Synology NAS admin panel: GcjrWN#l1EPxBZ"),
    ("password", "pwd for the old Windows laptop (account 'Dad'): marmalade1962"),
    ("password", "Netflix pass is DoSc48w3TWC#3c, shared with her sister in Leeds."),
    ("password", "Tom's work VPN password was reset this morning; the new one is UcpzV3JZOuU4!e"),
    (
        "password",
        "The passphrase for his GPG key is 'violet harbor under snow 42', he only "
        "types it when signing releases.",
    ),
    ("password", "Пароль от админки роутера: lisichka_2011, менять лень."),
    ("password", "Мой пароль от Госуслуг Zhenya!Sochi84, запомни на всякий случай"),
    ("password", "пасс от стима o5odkEKK9jdGLq, если брат будет спрашивать — не давать"),
    ("password", "Парол от почты на mail.ru: fayS#*v5eQYaO3 (она сама так написала, с опечаткой)"),
    (
        "password",
        "В банковском приложении пароль теперь Vesna2024!!, старый заблокировали "
        "после трёх попыток.",
    ),
    ("password", "пароль для 1С в бухгалтерии — buh_2023_Irina, Ира просила записать"),
    ("password", "Пасворд от айклауда у дочки: Masha$2009sea"),
    ("password", "парольчик от ноута qwe123asd — простой, знаю, но он так привык"),
    ("login_pair", "Work Jira login: anna.kowalski / Summer2024!"),
    (
        "login_pair",
        "Username dmitri_p, password Halibut#902 — that's his Steam account, not the work one.",
    ),
    ("login_pair", "School parent portal: user mia.rossi@school-parents.org, pass Bluebird_33"),
    ("login_pair", "Household Amazon account: email j.ng@fastmail.com pw Gr33nT3a!Bag"),
    (
        "login_pair",
        "For the dog-sitting app he logs in as rex_owner_88 with the password Biscuit&Gravy5.",
    ),
    ("login_pair", "Вход в личный кабинет ЖКХ: логин petrova_ln, пароль Dom2019kv47"),
    ("login_pair", "Учётка мамы на Госуслугах: +7 916 204-33-81 / Mama1958rose"),
    ("login_pair", "От рабочей почты: логин s.kuznetsov@stroyteh.ru пароль Ktulhu_77"),
    ("login_pair", "Для Дневника.ру — логин sonya.m2012, пароль sonya2012, Соня сама придумала"),
    ("login_pair", "Видеорегистратор на даче: пользователь admin, пароль Dacha#2020"),
    ("login_pair", "Доступ к FTP хостинга: юзер u48213, пасс Ft9!kLm2qp"),
    (
        "wifi",
        "Home Wi-Fi is 'Sorensen_5G' and the key is fjord-otter-1142 — for when the "
        "babysitter comes.",
    ),
    ("wifi", "Office guest network: SSID Meridian-Guest, WPA2 password Welcome@Meridian7"),
    ("wifi", "At grandma's in Porto the wifi is MEO-4F2A10, password 8c1e77a9d3"),
    ("wifi", "Airbnb in Kyoto: network Sakura_House_2G / pw sakura0415house"),
    ("wifi", "Wifi at the climbing gym → BoulderBarn, key chalkup2023"),
    ("wifi", "Домашний вай-фай: сеть Keenetic-7734, ключ 3hq9vx2m"),
    ("wifi", "На даче wi-fi называется «Dacha_Lesnaya», пароль sosny1985"),
    ("wifi", "В офисе гостевая сеть Stroyteh_Guest, пароль от неё Guest2024!"),
    ("wifi", "вафля у родителей — TP-Link_A3F2, пасс 49871265"),
    ("wifi", "Сеть в коворкинге «Точка»: Tochka_Work, ключ WPA2 — kofe_i_kod"),
    (
        "otp",
        "Bank just texted the verification code 583014, she asked me to hold it for "
        "a minute while she finds her glasses.",
    ),
    ("otp", "Her debit card PIN: 7309"),
    ("otp", "Door passcode for the building on Rua das Flores is 7781#"),
    ("otp", "2FA code for his GitHub login right now: 640 118"),
    ("otp", "The garage keypad passcode is 9043, same for the side gate."),
    ("otp", "Backup codes for his Google account: 4821-9930, 1172-6605, 8390-2214"),
    ("otp", "Steam Guard one-time code he got by email: K7RTX"),
    ("otp", "код из смс от Сбера — 381 907, она мне его продиктовала"),
    ("otp", "ПИН-код от карты Тинькофф 5128"),
    ("otp", "Код от подъезда на Профсоюзной — 1745#"),
    ("otp", "Одноразовый код для входа в Госуслуги: 602914"),
    ("otp", "Пин от сим-карты 0852, PUK-код 48137720"),
    ("otp", "Код подтверждения от Wildberries для получения заказа — 8842"),
    ("identity", "His SSN is 512-38-4907 — he needed it for the W-9 for the freelance gig."),
    (
        "identity",
        "UK National Insurance number: JT 48 27 19 C (she starts at the NHS trust next month).",
    ),
    (
        "identity",
        "US passport number 563917204, expires 2031, for the flight booking to Reykjavik.",
    ),
    (
        "identity",
        "UK driving licence number MORGA753116SM9IJ, needed for the car rental in Inverness.",
    ),
    ("identity", "California driver license D4827193, exp 08/2029"),
    ("identity", "Паспорт: серия 4519 номер 283746, выдан ОВД Тверского района"),
    ("identity", "СНИЛС у мамы 776-381-701 43"),
    ("identity", "Мой ИНН 775292960505, нужен для налогового вычета за лечение зубов"),
    ("identity", "ИНН ИП Серёжи — 784803462602, для договора"),
    ("identity", "Водительское удостоверение 99 21 457813, категория B, получал в 2021"),
    ("identity", "Загранпаспорт Оли: 75 4829163, действует до 2030 года"),
    ("identity", "СНИЛС Дениса 846-530-677 28 — для записи в поликлинику"),
    ("identity", "ИНН физлица 661058202258, Екатеринбург, это Ксюшин"),
    (
        "card",
        "Visa 4044 3487 4399 1757, exp 09/27, CVV 311 — she uses it for the grocery delivery.",
    ),
    ("card", "Amex 3772 779539 86915 for work travel, expires 04/28"),
    ("card", "Business Mastercard number: 5160412820980151"),
    ("card", "Her salary account IBAN: GB47 NWBK 4629 5382 2537 08"),
    ("card", "Discover card 6011 4544 9291 3747 exp 11/26, he only uses it at Costco"),
    ("card", "Spanish account for the holiday flat income: ES09 8800 8245 6739 0512 4645"),
    ("card", "NL47ABNA1162209773 — his Dutch IBAN for freelance invoices"),
    ("card", "Swiss account from the Zurich job: CH49 1339 3250 8839 3465 0"),
    ("card", "Карта Мир 2202 8137 7096 2775, срок 05/28"),
    ("card", "Номер карты мужа 4389 4005 2802 0063, CVC 402"),
    ("card", "Карта для кэшбэка: 5591-7590-9406-1988"),
    ("card", "Реквизиты её счёта в Португалии, IBAN PT16 0261 2858 7242 9568 6985 5"),
    ("card", "UnionPay от Газпромбанка: 6210 9077 5847 4943, до 12/29"),
    ("card", "Карта 2200 8246 2217 2010 до 03/29, на неё приходит зарплата"),
    ("card", "IBAN Сони во Франции: FR10 2202 2469 0103 0882 6266 836"),
    ("card", "Немецкий счёт для аренды, свой: DE87 7568 7612 1986 3989 03"),
    (
        "other",
        "Key for the backup box:\n-----BEGIN OPENSSH PRIVATE "
        "KEY-----\nb3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtzc2g"
        "tZW\nQyNTUxOQAAACB+IMQ/qYfu3sjfaosXiGlEnomui3u9IaHo82hbAFasSgAAAJi9QAAynt\n---"
        "--END "
        "OPENSSH PRIVATE KEY-----",
    ),
    (
        "other",
        "postgres://app_user:Wq8!mZr2t@db.internal.acme.io:5432/orders is the prod "
        "DB he connects to from DBeaver.",
    ),
    ("other", "In the .env for her thesis project: DB_PASSWORD=Hx7pQ2mLz9"),
    (
        "other",
        "SECRET_KEY = '7c23ego2ui90d2kkp3h7i4y-al0q8u$-&pj(*2hm&c+ld@lgq+' for his "
        "Django blog settings.py",
    ),
    (
        "other",
        "His Ledger recovery phrase: ribbon velvet absorb canyon lunar method orphan "
        "sugar drift picnic thunder wisdom",
    ),
    (
        "other",
        "Header for the internal billing API: Authorization: Bearer "
        "sb7g7vlDcgYXfuRI2G9Vx2Y3xFWPgAFxLIZ2hUkl",
    ),
    (
        "other",
        "Her garden sensor app writes to "
        "mongodb+srv://kate:Pl4ntP0t!@cluster0.x7qkd.mongodb.net/garden",
    ),
    (
        "other",
        "-----BEGIN RSA PRIVATE "
        "KEY-----\nMIIEpAIBAAKCAQEAX9kDpk1Xn86nWkfXRynVewhD51map3RMfxnSSQhakI9FCieE\nCj"
        "U9g4ShUPg50/G0/9lHtDmLwkqls6D+NjirKoLrQYFu8MGA7U6NtfG3bjVKx8A+\n-----END "
        "RSA PRIVATE KEY-----\n(the deploy key from the old VPS)",
    ),
    (
        "other",
        "age identity for his dotfiles: "
        "AGE-SECRET-KEY-1HK46MHPKKCDMAYUURFXHP62SEKGUSM7PTFNE736S6M0KMF52GR6ZC6Z2KD",
    ),
    (
        "other",
        "Строка подключения к базе интернет-магазина: "
        "mysql://shop:Vt3#kq9Lp@193.41.8.12:3306/shopdb",
    ),
    ("other", "В .env у проекта Лёши: REDIS_PASSWORD=m3rK8qzT1vPw"),
    (
        "other",
        "Сид-фраза от кошелька Trust Wallet: gallery hammer obscure pulse render "
        "tiger vacant eagle frost meadow shuffle bronze",
    ),
    (
        "other",
        "Приватный ключ для сервера на Hetzner:\n-----BEGIN EC PRIVATE "
        "KEY-----\nMHcCAQEEII+nQDc++CC8oX005E93amvHVdRSuudYpnpOsQ0EYPjxoAoGCCqGSM49\nAw"
        "EHoUQDQgAEBBBOKqYxXluJ5B4fZohWybRjm6a/NdehxCCflBxYy0LWVExc/kS/\n-----END "
        "EC PRIVATE KEY-----",
    ),
    (
        "other",
        "Заголовок для API партнёров: Authorization: Bearer 3kQz8WvN1pLxR7tYc2HfJ9mGbE4sUa6D",
    ),
    (
        "other",
        "Очередь в проекте: amqp://rabbit:Kr0l1k_2024@mq.local:5672/ — пароль от кролика там же",
    ),
    (
        "other",
        "Ключ шифрования из конфига: FERNET_KEY=WOd6SFTOVyxleW3tthgRrYNXpyhmJ1iWeF_DNga_z_E=",
    ),
    (
        "provider",
        "his openai key (side project, the recipe bot): "
        "sk-proj-6xHqcFclxEWwn5c9cW_0Gnm7YuN1Q7Ee9lJAxQnw9JsJx0HQsmm1s0dYJQDQJNXN-KE_"
        "JvZO4CT3BlbkFJ4nzZss1BXJhm72gAqSwUootXJWcV2zCHUPO4KoucJ-y_497SMn2GuAobW2P1_J"
        "aL8XRaeRoHHQ",
    ),
    (
        "provider",
        "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 <- thats my old openai "
        "key, still works i think",
    ),
    (
        "provider",
        "Anthropic API key for the slack summarizer = "
        "sk-ant-api03-JWhMK-s0ZUarKpMI0_rUEE7aoQlKXzQK8clOLciSPbmnpxKcOMQkXAhqq8wLI7e"
        "XLUPXEqoqEE6vIMRMKdkJJZCCd1y7fAA",
    ),
    (
        "provider",
        "aws creds for staging: access key id AKIA3ZVCINEDT44KF263 and the secret is "
        "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",
    ),
    (
        "provider",
        "GitHub token ghp_9GPCcKJzZ4A4nkc4XvFhsItDSJVjwzceJHgW (repo + workflow "
        "scopes), expires next month",
    ),
    (
        "provider",
        "slack bot token is "
        "`xoxb-036958632229-2746970598625-1Iuu3JG4dxCQOVisVw7FT6x1` — the one "
        "posting to #alerts",
    ),
    (
        "provider",
        "stripe live secret "
        "sk_live_510oPdysrUvCRKMuY8UurJkXvMTjsOKLUZywYG1sOtvUFRc02GNJZo6GNHJdHwG5r3eM"
        "Btx86QY5GMuMXGW3CADCDnC2NGfFYUn "
        "dont paste anywhere lol",
    ),
    (
        "provider",
        "Twilio: account SID ACcdf04c58784ffd10bfecd95c1fe07d0f, auth token "
        "84db9b21b1192a95bd209c8e9d79bb07",
    ),
    (
        "provider",
        "sendgrid api key "
        "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, "
        "sender noreply@lopes.studio",
    ),
    ("provider", 'newsletter acct — mailchimp key "5f69d97d695b6385d438724db2f21efc-us21"'),
    (
        "provider",
        "geocoding call he uses: "
        "https://maps.googleapis.com/maps/api/geocode/json?address=Lisbon&key=AIzaUrJ"
        "aMBHeRnOhRpnmhYGMvqURPI-a-o64tVB",
    ),
    (
        "provider",
        "DO personal access token "
        "dop_v1_dd2cdca0ecb5cb4a43615414507c59d4aa4e38bffe12b705f6a6fc886311cd4b for "
        "the droplets",
    ),
    (
        "provider",
        "the Shopify admin API token for her candle store is "
        "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",
    ),
    ("provider", "gitlab PAT glpat-Hw3KSDJsCFd0dtLezUqv, CI runner uses it to push tags"),
    (
        "provider",
        "bitbucket app password (for git over https): ATBBGqArB2OuUbm4l9pdU3bViUNamdnh729D4E99",
    ),
    (
        "provider",
        "discord bot tok: "
        "MTlPNRZza8iRcNlDP9HgtsWcgS.5usbIo.2ntf8U_vHV-t92OUjfKslwFnKYaZuS3ZeYFzeX "
        "goes in config.json",
    ),
    (
        "provider",
        "Braintree prod access token "
        "access_token$production$dv32e2ttqtibkps2$3970404c02673bac368755c9e4f8951a",
    ),
    (
        "provider",
        "cloudflare api token 7XWHMlgpB1eIe2g_I-irlzkG8jTN6vWJDs_Z1KGx (Zone.DNS "
        "edit on his domains)",
    ),
    (
        "provider",
        "postman api key — PMAK-3fa24a6c0eb5f7a14adf7cc2-fb0a403150921fead2f17ac4d0490883b0",
    ),
    (
        "provider",
        "terraform cloud team token: "
        "vyyK0my081xpib.atlasv1.cVndrrlTV7Zgmfqpemacn7E5YhtPEy3ZAtcCcdbaA5LyN8LZvT2Gr"
        "QKNWxpxfTREYaQ",
    ),
    (
        "provider",
        "Grafana service account token glsa_yUhUcpCVMnHXxKiq4DmBeV15eYjE9PKc_c8c1224a, admin role",
    ),
    ("provider", "New Relic user key NRAK-E1R9KH25MJQQ8NXRBE797O8I0OL for the dashboards script"),
    (
        "provider",
        "the jwt he pasted to debug auth: "
        "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiJ1XzQ4MjEzIiwibmFtZSI6IklyaW5"
        "hIEsiLCJpYXQiOjE3MTgyMDMzMTEsImV4cCI6MTcxODI4OTcxMX0._0e6DB8AuP9nMWU67xFOAPa"
        "zgmTTJqdDPddlQeNqIdc",
    ),
    (
        "provider",
        "mapbox secret token (downloads scope) "
        "sk.eyJ1Ijoi72xay5UmWCC1PM64xppiiMXbVk56118bQRHLJTvOOqEfFT8yii.1wnEiuqxKan8HH"
        "z8cnl3_x",
    ),
    (
        "provider",
        "Airtable PAT "
        "patmkcR7L4ThELIdC.b2e9cea16a3e7486601fa3956107cf14773f61c2d794d3e2d78f550566"
        "1733da, "
        "base is 'CRM 2024'",
    ),
    (
        "provider",
        "jira/confluence api token: "
        "ATATT3xFfGF0ej68HfzMmVkSmWjR-r-9JSa5RLU7-pWmWqXuqKs7tps-rwmLmwStgr4SlF_yNCyH"
        "Ykuxio9Ongrs_nDkSPlqHdlJple-7QE-0Zl_zpvEd3-bK7XYw8VJ2ml3OH3RW2eAl0oqvU1fwkY1"
        "Kb6rcZ-qyYLcegBcZ8Fw5N1f94aPRw=F80BBB3A",
    ),
    ("provider", "okta api token 00YFLhlqKRsXzZd4LWHGypwDceSFuCUUmiIx0BEUV- (read-only, he says)"),
    (
        "provider",
        "azure blob: "
        "DefaultEndpointsProtocol=https;AccountName=lopesmedia;AccountKey=KXBGc/KMrrx"
        "+J214gmsK3pkMgk72S5QG/bu0tdqhsGe/Y+ZbM28I3OFv0EZrlQtuOObjkE2biS8+rvIWJcNyBQ="
        "=;EndpointSuffix=core.windows.net",
    ),
    (
        "provider",
        "Algolia app XJ4K2P9QLM, admin api key bbf2edbfa5e52cf50033f9c1435764db — "
        "the search-only one is separate",
    ),
    (
        "provider",
        "FCM legacy server key "
        "AAAAAhn5o9D:APA91b361X1bb-6nClNoWRyB09qnHpUPD_P32sNxcmvJSG6m51oO-z6yoN3KKhIk"
        "MIrDWlEa7ccdwymb4h2gp40UorIOOo2nQiQDAOiDVSb0fUF27Wlrjv1uUasLMaNzEyAsm7dcBIhL",
    ),
    (
        "provider",
        "auth0 client secret for the mobile app: "
        "l8OcXZDjFn_cYdi4TJ-brkOls-930pVFrOLkWoY0jHDmIbT4kz-6JhqsmOHkyRqk",
    ),
    (
        "provider",
        "Dropbox access token "
        "sl.BS34ELhiRFpc8g2HSHDryxBgibF3FWnvvKtVeWVKZPkWHzKxJIY3IPiiEfRmBolL6Ka5IiflN"
        "C6ElbsFtUUxrfGj4KXn4fvFlcZa815A9slVm8vC0nthzyXsFFi9A2smdpL",
    ),
    ("provider", "Zoom app (server-to-server) client secret FWvx1GXfd33NYkku4KjUbGEd7Jd72yO9"),
    ("provider", "api key for the internal pricing service: v2aKHIcIbdOv1xJpQ2NJtVIXN4KAyNFa"),
    (
        "provider",
        "ключ от Яндекс Облака AQVNGpK_IjpkSOWvjCj0RplBayLP3pGYc9sZpmBp, сервисный "
        "аккаунт для бота",
    ),
    (
        "provider",
        "OAuth-токен Яндекса: "
        "y0_AgAAAAA_-YLxyeobsFB8GNNs1w3Leb67W8xx6mtd2G_5G1cYAcjh8mR (для Диска)",
    ),
    (
        "provider",
        "IAM токен "
        "t1.9euelZqFKI0VCpkG5DuJCMk0dh5fHJA1KJcIrBWCZzmTjs-bFGl5_jDFPhSUeRyJsbH — "
        "живёт 12 часов, потом новый",
    ),
    (
        "provider",
        "токен VK API для группы: "
        "vk1.a.7blzQwJlPOk-hRuOvgX28xYaJyCrLzoqDS3DeyOsUA6TiY_bIvc0XQWCzzoAw5XK6QyrMq"
        "Emag_pMRFczjHxDSmrj2utjP6H2OcVIMHqOZuwLYM8sabe3o97",
    ),
    (
        "provider",
        "токен Тинькофф Инвестиций (полный доступ) "
        "t.6h3Uw-vTg3u-mxAA22bQeSNao-xDpK52U-O7_-AQXJTPWkeVjwATPOdPU1kbxX-TOeNNNRimnE"
        "4Ng3XNIO-w21",
    ),
    ("provider", "СберБизнес API, client_secret = 1342540b-9019-4308-c272-da711814903a"),
    ("provider", "гитхаб токен ghp_K24zLDSj9fRjlm0hEsxvJOlPYcNuxkCL1tKI, права на все репо"),
    (
        "provider",
        "7330699080:AA-jfhtcqts5hG_c7pX8QvCWcswKx2cNoM0 — это токен его телеграм-бота для дачи",
    ),
    (
        "provider",
        "апи ключ гугла AIzaoWD9ZytpWHdfhYE2D5ZPSHQ74IqQQWC80Pq, включён YouTube Data API",
    ),
    ("provider", "AWS для прода: AKIAEOJWMAMLLTZRVK3A / taiSNMPxC8XFQcYHwJyvqeldGP4jKZz18g8vZO4r"),
    ("provider", "ключ Azure OpenAI «d4bf923a6dca9cc048fbc13949a4906b», ресурс в westeurope"),
    (
        "provider",
        "fine-grained токен гитхаба: "
        "github_pat_11AWGSME2F1KTRO3A7R0E1_521T8QjmAurug4JqZHwp3fTDeNHF0NC2aUbY3XXJRR"
        "sUdxGGzkk9zttYw8Y",
    ),
    (
        "provider",
        "в страйпе завёл restricted key rk_live_66yA06jumYzqJdS8stnx71sj только на чтение",
    ),
    ("provider", "whsec_7w5U9U0hERshx34lLvEe5VREehWBcPRx — секрет подписи вебхуков страйпа"),
    ("provider", "Rollbar, access token post_server_item: f2524a8153a948e3502e62d2edd531f2"),
    (
        "provider",
        "токен нетлифая nfp_dpHE8tDBgVbrOaFIDho8SBYJi24IhwKh8OfW, деплой из гитхаб экшенов",
    ),
    (
        "provider",
        "render api key rnd_by12qVqxUPEwYVrPmJjvAmI0USJ2uOlU (в настройках аккаунта сгенерил)",
    ),
    (
        "provider",
        "деплой-токен fly.io: FlyV1 "
        "fm2_lJPECAAAAAAAB4xaWqQHRr7n4VzD2B1nUFDSfE8gUglLGNaIZMo/Ltm67CjNtI+rU6S/8KYH"
        "fCXaBbTsLiiNOEZ1P6OVGn+QC35iHM5",
    ),
    ("provider", "Railway project token 156d7b31-bcab-403d-abc1-ccd1f120b11e, для CLI в CI"),
    (
        "provider",
        "вебхук слака: "
        "https://hooks.slack.com/services/TQELBZ0FY0H/BPW82PLPH1Y/hDqgsgGrey4Ll2Gqvgr"
        "8kvwQ",
    ),
    ("provider", "mixpanel api secret 26dbd805f400c220a3dc7d88d8bdf44e, проект «Заметки»"),
    ("provider", "segment write key: O9FwzEwWl0Izv0QDagrzqI8S22qzgS9B"),
    ("provider", "ключ амплитуды 5bcd0a2ba82816e4ea225e896e982633 и secret key отдельно не дал"),
    ("provider", "honeycomb ключ (ingest) Wk8tnEinb5PNCigX6x0kR2, датасет prod-api"),
    (
        "provider",
        "погоду тянет так: "
        "https://api.meteo-svc.ru/v1/forecast?city=msk&api_key=dl7oPZ5Q8QaTG5PpRTlZ3I"
        "bPiKvnMGlvixPwqlRM",
    ),
    (
        "provider",
        "Asana PAT "
        "2/4383527772446568/9855742195348968:b5603ae4633cae2fee53aad5b9e03380 — для "
        "интеграции с телегой",
    ),
    (
        "provider",
        "трелло: key 3b1f0c9e7a24d58b6e0f2a9c4d7b1e38, token "
        "ATTA0ab3bd91919800ee6e5c30b6411e431529bb927feb17c3b87c338e4f259f25e22A7129C4",
    ),
    ("provider", "токен: c1b49a816ac99228ffd6d9d148e55cc5998f8d32 (от внутреннего апи склада)"),
    ("provider", "netlify ещё один, для второго сайта — nfp_JGJCna4MBJhJgbz5qomU04OXeRHpbFvppl5F"),
    ("password", "password for his work laptop is Tr0mb0ne!Lisb0n"),
    ("password", "pw: kettle-orbit-93 (the NAS admin page)"),
    ("password", "pwd = D9iVFkfBARenPu, he generated it in the browser"),
    ("password", "my passcode is 'marmalade 4 ever' dont tell my brother"),
    ("password", "the code to my laptop is 7731hunter, in case i forget"),
    ("password", "passphrase for the backup drive: correct pelican staple ninety"),
    ("password", "Greenhouse2019! — that's the login password for the school portal"),
    ("password", "changed the gmail pass to fvKsZXjEpL7N&S yesterday after the scare"),
    ("password", "pword is sunflower88 lol, same one for everything tbh"),
    ("password", "passwd for root on the raspberry pi → raspberry-Mor3no"),
    ("password", "her Apple ID password, she says, is [Gaivota#1991]"),
    ("password", "пароль от почты: Ласточка1987"),
    ("password", "пароль поменял на M#lp88vwOqvkF$, старый больше не работает"),
    ("password", "пасс от стима — tigr0vaya_lilia"),
    ("password", "парол от ноута qwerty_Rus2024 (сам просил записать)"),
    ("password", "пассворд от админки магазина: #OvkyxT#b71zyS"),
    ("password", "пасворд для рабочей учётки RRLO96kJXiJmw9 до конца квартала"),
    ("password", "пароль — «синий трактор 42», с пробелами"),
    ("password", "ЗелёныйКот_77 это пароль от госуслуг, на всякий"),
    ("password", "пароль такой: 31YcN0PI5OgKl*"),
    ("password", "пароль от роутера (вход в админку 192.168.1.1) — Krot_admin2023"),
    ("login_pair", "netflix login: maria.lopes@gmail.com / Sardinha#2020"),
    ("login_pair", "jira user dkowalski pw Qm7!rtLp29"),
    ("login_pair", "ssh into the box as deploy:Vx7!qLm2rPz"),
    ("login_pair", "school portal — username 20481337, password bluejay_kite"),
    ("login_pair", "his steam acct is nightowl_91, and the password P1neapple!Rain"),
    ("login_pair", "email t.harlow@outlook.com, pass: wintergreen55"),
    ("login_pair", "Costco membership site: jen.okafor / Lagos-Sun-2022"),
    ("login_pair", "логин от Госуслуг +79164820317, пароль Vesna2024!"),
    ("login_pair", "вход в 1С: пользователь buh_ivanova, пароль Kvartal_3"),
    ("login_pair", "учётка на работе — ivanov.pa / Pyatnica13$"),
    ("login_pair", "почта olga.smirnova@yandex.ru пароль olga1984olga"),
    ("login_pair", "логин kotik_mur, пасс 5Ynw2xQz — это от форума"),
    ("login_pair", "админка сайта: admin:Zhuravl!2718"),
    ("login_pair", "дневник.ру: логин petrov_misha2012, а пароль 12misha12"),
    ("wifi", "home wifi: network 'Casa_Lopes_5G', password sardinha2019"),
    ("wifi", "WLAN SSID FRITZ!Box 7530 QX, WPA key 48203917562810394857"),
    ("wifi", "wifi pw for the cabin (network: Lakeview) is loons&pines77"),
    ("wifi", 'the airbnb wifi: SSID "Ribeira_Flat", pass "azulejo2023"'),
    ("wifi", "router sticker says TP-Link_8F2A, wireless password 73619402 — never changed it"),
    ("wifi", "wi-fi at grandma's is called NETGEAR47 and the key is happyriver531"),
    ("wifi", "вайфай дома: Keenetic-4412, пароль medved2020"),
    ("wifi", "вай-фай на даче — сеть «Дача_Петровых», пароль 12345678dacha"),
    ("wifi", "сеть MGTS_GPON_7C21, ключ безопасности uD7kXq93"),
    ("wifi", "точка доступа с телефона «iPhone Саши», пароль sasha1111"),
    ("wifi", "пароль от wifi в офисе: сеть Office_2G, пароль Krasnaya_Strela88"),
    ("wifi", "вайфай у мамы Rostelecom_A7F3 пароль mama19590312"),
    ("wifi", "wifi 'Beeline_5G_2A19' — пасс от него zimnyaya_vishnya"),
    ("otp", "SMS code from the bank was 482913, he read it out to me"),
    ("otp", "verification code: 771 204"),
    ("otp", "2FA backup codes — 8f3k-29dm, 4hq7-x0pa, 9zvc-1mn3, 2kd8-77qe"),
    ("otp", "his debit card PIN is 4096"),
    ("otp", "gate code for the building is #2719"),
    ("otp", "safe combination 18-42-07 (the one in the closet)"),
    ("otp", "confirmation code google sent: G-583017"),
    ("otp", "github recovery codes: 5c1e9-a83f2 7d04b-ee9c1 a0f33-6b2d8"),
    ("otp", "door code 4471* then the bell"),
    ("otp", "код из смс 5829"),
    ("otp", "код подтверждения от Госуслуг — 318 624"),
    ("otp", "пин от карты 7731, он сам написал"),
    ("otp", "пин-код сим-карты 0852, PUK 41928375"),
    ("otp", "код домофона 45К1209"),
    ("otp", "код от сейфа в номере 2580"),
    ("otp", "одноразовый код: 604118, действует 5 минут"),
    ("otp", "резервные коды Google: 4820 1937, 5561 0284, 7730 9125"),
    ("identity", "SSN 512-48-7390 (needs it for the W-4)"),
    ("identity", "her ITIN is 912-78-4410"),
    ("identity", "UK National Insurance number JR 48 23 71 C"),
    ("identity", "NHS no. 490 343 6934, registered at the Hackney practice"),
    ("identity", "US passport number 583920174, expires 2031"),
    ("identity", "California driver license D4829157"),
    ("identity", "UK driving licence HARRI803147JD9QT"),
    ("identity", "Steuer-ID: 35 527 185 494 (from the Finanzamt letter)"),
    ("identity", "Spanish DNI 25046881L"),
    (
        "identity",
        "NIF in Portugal is 235184527, residence permit (título de residência) no. F8KJ2P4Q7",
    ),
    ("identity", "green card, USCIS # A204718339"),
    ("identity", "Polish PESEL 99031495020"),
    ("identity", "паспорт: 4519 738204, выдан ГУ МВД по г. Москве"),
    ("identity", "загранпаспорт 75 4829103, действует до 2032"),
    ("identity", "заграничный паспорт № 76 1938472"),
    ("identity", "СНИЛС 998-811-144 79"),
    ("identity", "снилс 61884095425"),
    ("identity", "ИНН 772427385310 (личный)"),
    ("identity", "водительское удостоверение 77 31 482915"),
    ("identity", "права: 99 24 105738, категория B"),
    ("identity", "полис ОМС 7751 2904 8316 0427"),
    ("identity", "ИИН (Казахстан) 900418468829"),
    ("identity", "вид на жительство № 82 0457391"),
    ("identity", "500341727086 — это ИНН жены, для вычета"),
    ("card", "visa 4718 2096 9592 7329 exp 08/27 cvv 314"),
    ("card", "card number 4702312935547770, expires 11/26"),
    ("card", "Amex 3753 961960 24326, CID 8821"),
    ("card", "IBAN DE60 7993 2268 8996 8594 69"),
    ("card", "wire the deposit to GB26NWBK94201176803935"),
    ("card", "routing 029043860 account 4418203967 (checking)"),
    ("card", "Discover 6011-7151-3398-2253"),
    ("card", "salary goes to PT77148805176664340964146"),
    ("card", "the second amex: 341556393159420, 05/28"),
    ("card", "карта мир 2200 6700 6082 5647, срок 04/28, CVC 527"),
    ("card", "номер карты 2202674276010851"),
    ("card", "карта тинькофф 5151 7354 0032 8867 срок до 09/29"),
    ("card", "р/с 40817810504695589500, БИК 044522607"),
    ("card", "IBAN для перевода в Казахстан: KZ347223162748384392"),
    ("card", "UnionPay 6277169037284268 — карта для поездок в Китай"),
    ("card", "его карта: 4920775684277615 (срок 02/30, код на обороте 093)"),
    ("card", "ES49 0881 8344 6612 6769 9367 — испанский счёт"),
    ("card", "маэстро 6760405631740121"),
    ("card", "грузинский счёт GE87TB4955817847272728"),
    ("card", "перевод в Дубай на AE181814250650727128209"),
    ("card", "NL53INGB4407997420 — голландский счёт сестры"),
    (
        "other",
        "-----BEGIN RSA PRIVATE "
        "KEY-----\nMIIEpAIBAAKCAQEAWbR3L3IbIGxDpp++0YIVrK6zYkarSnoe3d5nWvSIgj1C17yY/Su"
        "uOSfSBr0fnWaDkkzp81sInwV82EACOu/ZuUfjXnqnuSjlqa1ngibf3FsIcMml5eQkvrUmTHwKr3c"
        "WTDMCDWhklmgsMfUqDi5CkBNwjglPmCzh\n-----END "
        "RSA PRIVATE KEY-----",
    ),
    ("other", "DATABASE_URL=postgres://app:Gx92!kLpQ@db.internal:5432/notes"),
    ("other", "SECRET_KEY=django-insecure-&0be+66+dgjd3@v(x=3tgg5zbi8+p39gr8@0xo*afnp2)!%8i@"),
    (
        "other",
        "seed phrase: embrace boost leopard able flash pact bulb bronze glide "
        "inquiry inflict shrug",
    ),
    (
        "other",
        "metamask private key 0x46f46caa8d3a27320ddd2b54a868dc518a3142ef515dbe253004b598e3643b8f",
    ),
    ("other", "grafana login link he bookmarked https://admin:Zx81qq!p@grafana.mycorp.io/login"),
    ("other", "curl needs header Authorization: Basic ZGVwbG95OlZ4NyFxTG0yclB6"),
    ("other", "redis://:r3d1sP4ss_x9@10.0.3.12:6379/0 is the cache"),
    ("other", "JWT_SECRET=55715ec5cfc1119574617076531792ebad231386120182ca366f4e6d25bf2f32"),
    (
        "other",
        "-----BEGIN EC PRIVATE "
        "KEY-----\nMHcCAQEEIKpAm0po/YUL5sogoJtcsZp91EuNMbqoRy+/kzsjGOm7VyKKDfI1FyyVL4h"
        "xUuS3RCOfWu86OX+AwPo4lL0MAzvj9hNPo/TIwzRuh/KUkThn\n-----END "
        "EC PRIVATE KEY-----",
    ),
    (
        "other",
        "вот ключ от сервера: -----BEGIN OPENSSH PRIVATE KEY----- "
        "b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZSqTaVHTOyBhybV9QkwE2e18Kq9ld3LneCSn"
        "V1IYE0km36t3flA8yKJv6L3Nw1d8HTp7rzjZAObq6aWU4A9IWqRVtp8+xJZxk3zPEFWHxPmTKThU"
        "lbKkZkAT1w== "
        "-----END OPENSSH PRIVATE KEY-----",
    ),
    (
        "other",
        "сид-фраза кошелька: length lava erosion emotion wing organ verb pipe gift "
        "wide number century",
    ),
    (
        "other",
        "24 слова от леджера — kitten bird cabbage vacant play fold document primary "
        "anxiety evoke antique blush trend sweet oyster tissue edit erase will "
        "chapter spice squeeze nominee sheriff",
    ),
    (
        "other",
        "приватник от кошелька bc5bfbc63302c44499edd04ca9a4726034faef35a7c93add1d4c56fd9a561325",
    ),
    (
        "other",
        "строка подключения к монге "
        "mongodb+srv://shop_user:Pel1kan2024@cluster0.ab12c.mongodb.net/shop",
    ),
    ("other", "в .env: DJANGO_SECRET_KEY=pb7u+_+hld3cl=09#q(a#=!8&rn!==u07(h_x-n_oq@drrd94="),
    ("other", "очередь: amqp://rabbit:m0rkovka@mq.local:5672/%2F"),
    (
        "other",
        "заголовок для запросов Authorization: Bearer spXw56e6Q1qF8mA5L168XkHKIEcQKT8NlWIWXJM4",
    ),
    ("other", "ссылка на NAS с доступом https://olga:Vesna_2024@nas.home.lan:5001"),
    ("other", "база на проде — mysql://root:Sosna_1977@127.0.0.1:3306/crm, бэкапы туда же"),
    (
        "provider",
        "my openai key for the side project: "
        "sk-proj-QfSeReJAxHNsRUip97vvmXxrlOZyKpdUow96WJojvHjOiVgW_UCt-Fvh4nT3BlbkFJy7"
        "Dyf-mvRbfo3LORlvK5Uts_RgC6mEzOPUzE-D158_Upx_OgjcF5DxHbkb",
    ),
    (
        "provider",
        "old openai key still works i think 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",
    ),
    (
        "provider",
        "User's GitHub token (classic, repo scope): ghp_SdE76O7I4uKcmzSuvUW2osuKIe1KoGDlOyM6",
    ),
    (
        "provider",
        "aws creds for the shop bucket -- access key AKIAIIWQTDJPOS3CUB6H, secret "
        "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",
    ),
    (
        "provider",
        "slack bot token for the #alerts channel is "
        "xoxb-675836058601-1059854571586-FYt96jK9N4S0rXQhJtZ6PLtg",
    ),
    (
        "provider",
        "stripe live secret = "
        "sk_live_51R0c5IrWXVzmxDorW0FPNzRciP7NST5kBhFgT6jpselFIYLcAZFgDgdFPICgKpfsUfc"
        "EvC5DRlL69AS0Ig3NAZW16YSfTygMaA, "
        "test one is in the dashboard",
    ),
    (
        "provider",
        "Telegram bot for the bakery orders 🍞 token "
        "7591758120:AAalqqDSu5dzYLVktSLde7p43TEnDROdJzV",
    ),
    (
        "provider",
        "Sendgrid api key (newsletter only): "
        "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",
    ),
    (
        "provider",
        "hf token for downloading the llama weights 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",
    ),
    (
        "provider",
        "discord bot token "
        "MTY2MDYzMDIyNzg3NDEwNDkxNg.8w6kPu.OhSp7aOdkN91F-qWCTexltUoi36Df6hPHVGNAH "
        "pls keep it safe its my guild bot",
    ),
    ("provider", "`glpat-ZPOljpDmsQN5mmgiVFbM` <- that's the gitlab one for the CI runner"),
    (
        "provider",
        "Google Maps key AIzaOslzsDlS1yyginXJ_PAJKfZniw9-FLCX3Ur, restricted to our "
        "domain (hopefully)",
    ),
    (
        "provider",
        "Twilio: account AC3ba45b5a223c032dd6ea1f56cd834b1c, auth token "
        "41902b02357044c44ebd4f74bc6e7a10 for the appointment SMS",
    ),
    (
        "provider",
        "datadog api key e7f9c0b20ca119b368ca6f43afd26435 app key "
        "45dfaadad425468be05eb7cbe5c0dc448ad89ac1 for staging",
    ),
    (
        "provider",
        "openrouter key: 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",
    ),
    (
        "provider",
        "Ugh so tired today. anyway the groq key (free tier) is "
        "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",
    ),
    (
        "provider",
        "npm publish token npm_wdk8Oyxjqo5qqb39rlDryM3FBI5XKRtWJpeE for the @brightbakery scope",
    ),
    (
        "provider",
        "Shopify admin API access token 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 (store app)",
    ),
    (
        "provider",
        "DO token "
        "dop_v1_1787c4302da6bb512e4d5620e88bd911f524048dfc6b58e309a1ecd912251bcb for "
        "the droplet snapshots",
    ),
    ("provider", "api key: xlMNxqwtpNKAizr8XkBkYvxVzwCBO4wE (the weather widget thing)"),
    (
        "provider",
        "Mapbox secret token for uploads "
        "sk.eyJ1IjoibWFyaW5hLXRyYXZlbHMiLCJhIjoiPEyYUOMWL7SGgjlrycJdZIczAIn0.4YCwq2Le"
        "rq6u6A3CQk3sl7",
    ),
    (
        "provider",
        "Токен бота в телеге для записи клиентов: 6917372349:AAOUnRjR5Ox-pGYTSzzA3OLTQ_FQkFF1D7y",
    ),
    (
        "provider",
        "Яндекс OAuth токен для Директа "
        "y0_AgAAAABlwwgA-_WlDGhuGxqBYdavK2qrRkaav6GvvLedxcSWKG-QHgLP2",
    ),
    ("provider", "ключ API Yandex Cloud (для YandexGPT): AQVNCTLwOxe0TR0pj-G86QY9wWzELovNtZF7CpLM"),
    (
        "provider",
        "вк токен сообщества "
        "vk1.a.k0c45dTuksCs-SRRjIMRti6dhpZ85WspISqJ-WXA_2ydZeGOLpNxEcNT2fhLgKfara0YPk"
        "9EAPwp9I1iSkWXOyxe6Ebh6Lhu_3rLbgKaaTKlY-y_fK6e9rcT",
    ),
    (
        "provider",
        "токен Т-Банк Инвестиций "
        "t.cs0jgrqu1_dSCKl6GAUVNRMEccbybnbbAghAZKGiHVTZ8a-YQ--aMfAVcqR8PQv7PBpAdd0kig"
        "Taioq_nmfR9Y, "
        "вроде только чтение",
    ),
    (
        "provider",
        "GigaChat ключ авторизации: "
        "YzE4Mzk3MmMtZDIxOC00YzVkLTk1MDAtZWRjNGNjNWUzMzk0OmNhM2U5ODhmLWJhMzEtNDFkNS1i"
        "NjhkLWYyZjNiMTMzODI3ZQ==",
    ),
    (
        "provider",
        "дадата апи ключ 389ab7fe3fdb4babd1f53c55132c0af65fe80de2, секретный "
        "fe4913b47f55f942fd2c2557bb16485a8b6ad129",
    ),
    ("provider", "ЮKassa секретный ключ магазина live_7HzI55REHAeuvE6UXrnzh8LiVUh9SaCB9cIbrcOO"),
    ("provider", "ключ для обмена 1С с сайтом: wIOFVjdm95afmzP_6a3SLYEtrgx53P3d"),
    (
        "provider",
        "СберБизнес API client_secret hKTve9lsomLX_QXvDJHA105nUNs8Mi_Lj3Lu9vGr, "
        "client_id у бухгалтера",
    ),
    ("provider", "апи кей от deepseek sk-24e889df96d196757cccd7b4aba0e2eb, пополнил на 10$"),
    (
        "provider",
        "ключ от sms.ru api_id F868C9CD-C5FE-7D41-E993-B25DE861A1CC для рассылки напоминаний",
    ),
    ("provider", "Ozon Seller: Client-Id 1843270, Api-Key 977304f8-d16b-47c0-b925-c2e6b161fb5c"),
    (
        "provider",
        "мой ключ от anthropic — "
        "sk-ant-api03-Opz3vvmX1TgWQ6n7ZORbaVgsSxeA23WHXHxlccoBh1LloWUobwkNfq4zqvgN4PJ"
        "V_CH8rBpyDfJII4aC9hdQGcA1jtOKxAA "
        "не свети нигде",
    ),
    ("provider", "Авито API client_secret: GsW_uk9QaNn6ZO3x7UmCsBM6QZSVWXyoTCzPkzQe"),
    (
        "provider",
        "github_pat_11S4VIOARF2R8OONAF8JQ8_7W8wGRHgCzRRnDrpiCmF4eFAgkxejnLDl3wlFKUBC7"
        "xddbd0bLflN3cZAAy "
        "— это fine-grained токен гитхаба для деплоя",
    ),
    (
        "provider",
        "token ot xai (grok) "
        "xai-YkJBWj3scqUxWePAVSbhsLVYVsqR4QIYqRXGsou7u7y5ZWuNMUjHLGQiolpDPrklf44VYTt9"
        "nEWtHuYa",
    ),
    ("provider", "токен: e6fb318a9db6ac115ab9305382d6ff52d13391796b458963 — от нашего CRM"),
    ("provider", "Cloudflare API токен KMqnTh1fkqyYeiy5aQJtViBjdnz6CzYBE64rr7Nj (DNS edit)"),
    ("provider", "Ключ Яндекс Карт для сайта доставки cd92e206-053c-45e6-a2b3-624a896591d3"),
    ("password", "grandma's email password is Sunflower1952, she asked me to remember it for her"),
    ("password", "pw for the NAS is Gr@nite-Owl-77"),
    ("password", "the password is literally hunter2boat! don't laugh"),
    ("password", "his laptop pass: 7kp@Oz21pEBzpxAD"),
    ("password", "new steam password = DragonSlayer_2024!! (changed after the phishing thing)"),
    ("password", "passwrod for the router admin page is admin4321x"),
    (
        "password",
        "I changed it to blueberry-Pancake-42 — the password for the shared family Apple account",
    ),
    ("password", "Password: 'Lisbon#Sunset88' (coworking portal)"),
    ("password", "vault master password: M0nday.Coffee.Rain"),
    ("password", "Vera writes her passwords on sticky notes; the bank one is Kitty1939cat"),
    ("password", "pass is in caps lock lol: TIGERLILY_09"),
    ("password", "пароль от госуслуг Ромашка_1961"),
    ("password", "parol ot pochty: zima2023moroz"),
    ("password", "пароль от компа на работе — Qwerty!2345678, сменил в понедельник"),
    ("password", "пасс от сервера бухгалтерии: Buh_2024#Kvartal"),
    ("password", "Пароль у меня везде одинаковый: Masha15081990 (не говори никому)"),
    ("password", "парль от 1с Glavbuh777"),
    ("password", "пароль от личного кабинета сбера — СолнышкоМоё55"),
    ("password", "Напомни мне потом: пароль «Котлета_с_пюре9»"),
    (
        "password",
        "сегодня жара ппц, сидим с детьми дома. а, пароль от архива с фотками: leto-v-sochi-2019",
    ),
    ("password", "pass ot steama: NagibatoR_3000"),
    ("password", "мастер-пароль от KeePass V8LOGKsoWAu7"),
    ("login_pair", "login for the school portal: emma.w2011 / Pony$tar11"),
    ("login_pair", "netflix: dadfamily.r@gmail.com pw Halloween!2022"),
    ("login_pair", "user: admin pass: Zx9!qLm4Tr (the old wordpress site)"),
    ("login_pair", "ssh deploy@203.0.113.14, password is Vt9#qLm2xRw"),
    ("login_pair", "Steam acc xXShadowWolfXx pass wolfpack_7788"),
    ("login_pair", "QuickBooks login: mary@brightbakery.co, password CinnamonRoll#4"),
    ("login_pair", "my uni account is s2219834 and the password is Thesis_is_hell_24"),
    ("login_pair", "bank app (mBank): username rkowalski88, password Gdansk!Harbor9"),
    (
        "login_pair",
        "'tomasz.k' is the username. And the password... I told you before, it's Kr@kow2019",
    ),
    ("login_pair", "Ruby-Sparrow-19 is the Gitea pass for user devops_ivan"),
    ("login_pair", "RDP to the office box: OFFICE\\jsmith / Winter2025!!"),
    ("login_pair", "логин от госуслуг — телефон +7 916 482-17-35, пароль Ромашка1961"),
    ("login_pair", "Вход в 1С: пользователь Бухгалтер2, пароль 5544kvartal"),
    ("login_pair", "login: olga.petrova1975@mail.ru parol: OlgaP_1975!"),
    ("login_pair", "почта на работе ivanov@stroyinvest-ekb.ru пароль Ivanov2024$"),
    ("login_pair", "аккаунт в варфейсе: ник KoT_BaTon, пасс kotbaton1337 😎"),
    ("login_pair", "Личный кабинет МТС: логин 89036451278, пароль mts-Lena-07"),
    ("login_pair", "учётка роутера была admin/admin, теперь поставил admin / Rout3r_Dom!"),
    ("login_pair", "WB кабинет продавца: login ip_smirnova, пароль Smirn0va_WB"),
    ("login_pair", "дневник.ру: логин mama_Sasha_3b, пароль 3bklass2024"),
    (
        "login_pair",
        "Логин Яндекс ID petrovich.garage, а пароль... ну тот, с машиной — Niva4x4_1987",
    ),
    ("login_pair", "зайти на сервак: root@10.0.0.5 pass: Sys@dm1n!Qaz"),
    ("wifi", "wifi at grandma's: network 'TP-Link_5G_7A21', password margaret1947"),
    ("wifi", "Home WiFi SSID: TheWiFiFamily pw: pancakes4breakfast"),
    ("wifi", "Office network CoffeeCorp-Staff, WPA2 key Bean$Roast!44"),
    ("wifi", "the wifi password is sunshine_42 (network is called NETGEAR37)"),
    ("wifi", "guest net 'Pretty Fly for a WiFi' pass=fly_high_2023"),
    ("wifi", "Airbnb in Lisbon 🏠 SSID MEO-4F2A1C, password 8d3f9a27c1"),
    ("wifi", "router sticker says: SSID Vodafone-B7E3, key X7pQ-mR2k-9vLt"),
    ("wifi", "lan party tmrw!! wifi: FRAGNET_5G / headshot2025"),
    ("wifi", "вайфай дома: сеть Keenetic-3481, пароль 89165530"),
    ("wifi", "wi-fi на даче: Rostelecom_A7F2 пароль dacha2020"),
    ("wifi", "Пароль от вайфая в офисе — Ofis_Wifi_2024, сеть называется OFFICE_5G"),
    ("wifi", "сеть «Мамин интернет», пароль qwerty12345mama"),
    ("wifi", "vaifai: MGTS_GPON_4C7D, parol: h7Tx9pKm"),
    ("wifi", "Wi-Fi в квартире в Тбилиси: сеть Magti_Fiber_21, пароль tbilisi2024!"),
    ("wifi", "Домашний вайфай TP-LINK_8E62, ключ сети 50138872"),
    ("wifi", "Если придут гости: гостевая сеть Guest_Ivanovy, пароль gosti123"),
    ("wifi", "кафе у дома, сеть CoffeeLike_Staff — пасс бариста дал latte_only_2024"),
    ("otp", "bank texted me code 482913, what should I do with it?"),
    ("otp", "my 2fa backup codes: 8492-1736, 5520-9914, 3071-6628"),
    ("otp", "door code for the building is 4719#"),
    ("otp", "SIM PIN 2580 and PUK 73920481, writing it here so I don't lose it"),
    ("otp", "Verification code: 771 204 (WhatsApp)"),
    ("otp", "hotel room safe code 0613"),
    ("otp", "the gate code at the storage unit is *3390"),
    ("otp", "Google sent G-583017, can you tell what that is"),
    ("otp", "card PIN 6142 don't tell mom"),
    ("otp", "steam guard code R7K2P quick"),
    ("otp", "код из смс от сбера 7359 — продиктовать ему? он сказал что из службы безопасности"),
    ("otp", "код домофона: 45 В 2791"),
    ("otp", "пин-код от карты 3857"),
    ("otp", "Резервные коды гугла: 40281937 77301846 11902765"),
    ("otp", "код подтверждения госуслуг 620418"),
    ("otp", "ПУК от симки мегафона 18472650"),
    ("otp", "kod ot kalitki na dache 1987"),
    ("otp", "сейф в кабинете открывается кодом 2-7-4-1"),
    ("otp", "пин от телефона сына 0512 (его день рождения)"),
    ("otp", "одноразовый код для входа в Т-Банк: 5581"),
    ("identity", "my SSN is 527-48-3196, needed it for the tax form"),
    ("identity", "UK NI number JT 48 29 17 B"),
    ("identity", "US passport no. 548213977, expires 2031"),
    ("identity", "Driving licence number: MORGA753116SM9IJ"),
    ("identity", "German ID card (Personalausweis) number L7K4M9R23"),
    ("identity", "Residence permit (Aufenthaltstitel) no. Y8F2K9L41, valid till 2027"),
    ("identity", "Canadian passport AK729384"),
    ("identity", "my NIE is X-4829173-R, the gestor needs it for the lease"),
    ("identity", "California DL D4829173 exp 2029"),
    ("identity", "PAN card AKRPM4821L (India) for the freelance invoice"),
    ("identity", "social security # 612 30 4419 (my husband's)"),
    ("identity", "Ukrainian ID card number 004829173"),
    ("identity", "паспорт серия 45 19 номер 738204, выдан ОВД Тверского р-на"),
    ("identity", "СНИЛС 497-479-212 60"),
    ("identity", "ИНН мой 771553434005 (личный, физлицо)"),
    ("identity", "snils mamy: 142-778-438 89"),
    ("identity", "загранпаспорт 75 4829173 до 2032 года"),
    ("identity", "водительское удостоверение 77 24 618392"),
    ("identity", "Вид на жительство № 82 4719283, выдан в Алматы"),
    ("identity", "Паспорт РФ: 4620 381947, код подразделения 500-112"),
    ("identity", "ИНН физлица 509250757717, нужен для вычета"),
    ("identity", "СНИЛС сына 119-707-035 60"),
    ("identity", "удостоверение личности Казахстана № 048291736"),
    ("identity", "personal number в грузинском ID 01027048213"),
    ("card", "card 4724 7800 5739 8368 exp 09/28 cvv 417"),
    ("card", "use my mastercard 5116360823401318 for the groceries order"),
    ("card", "Amex 3490 637720 38822, exp 11/27"),
    ("card", "IBAN DE21 4425 5272 9825 7008 28 (my Sparkasse account)"),
    ("card", "GB98ZFZD49869385303373 - that's the UK IBAN for the contractor payroll"),
    ("card", "pay the rent to NL33GFLU5388378378, landlord Pieter"),
    ("card", "visa debit 4212-6715-8272-9699 / 03/29 / 882"),
    ("card", "company card: 5328 7399 4150 3671"),
    ("card", "discover 6011 6106 2375 4496 exp 0426"),
    ("card", "CH43 9659 3526 7303 2057 8 - Swiss account for the salary"),
    ("card", "JCB card 3513444753735616 from my Japan trip, still active"),
    ("card", "карта мир 2200 4552 3141 0960, срок 08/27, cvc 305"),
    ("card", "номер карты сбера 2202688026106579 — скинь туда"),
    ("card", "карточка тинькофф 5517 9458 2836 8218"),
    ("card", "kartochka mamy: 2204 7416 8589 1375"),
    ("card", "IBAN для перевода в Грузию GE83MH0789023312805644"),
    ("card", "Счёт в Казахстане KZ05632Q3521HT47253B (для аренды)"),
    ("card", "юнионпэй 6203 8379 0231 9927, оформил в Газпромбанке"),
    ("card", "карта 4805568067213640 до 12/26, код сзади 731"),
    ("card", "PL83087719909855228088483260 — польский счёт для зарплаты"),
    ("card", "карта Альфы 2720 7525 7677 5549, cvv 118"),
    ("card", "мой IBAN в Турции TR66 5692 7046 9908 1122 9554 17"),
    ("card", "2201 4242 7707 5789 — Мир, зарплатная"),
    (
        "other",
        "-----BEGIN RSA PRIVATE "
        "KEY-----\nMIIEpAIBAAKCAQEA7XxXjndwNrrWKTY5Xs+xL0aLYbadTqNkPG7F9F6aXNhm7bdM\nif"
        "WzQbtPt8WYZQ2UUD/n6lXk6j/k8426/eUIGwC9VN5KECKfSU+HTUq74rs2Q/aC\n-----END "
        "RSA PRIVATE KEY-----",
    ),
    ("other", "DATABASE_URL=postgres://shop:Gr8Bagels!@db.internal:5432/orders"),
    ("other", "SECRET_KEY = 'django-insecure-k8#v2!q9w@x3m$z7p^r1t&y5u*o0i(e4a)s6d-f+g=h%j'"),
    (
        "other",
        "seed phrase (metamask): bamboo ankle brisk actress bundle arctic blossom "
        "average buyer acoustic bracket amused",
    ),
    (
        "other",
        "Authorization: Bearer "
        "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiAidV80ODIxMyIsICJyb2xlIjogImF"
        "kbWluIiwgImV4cCI6IDE3NjcyMjU2MDB9.9GtZVwBjw3fM-wMomteNlXEsML8Hhp1y_PTGlS1xRK"
        "c",
    ),
    (
        "other",
        "webhook with creds baked in https://deploy:Vt9q_LmX2@ci.brightbakery.co/hooks/build",
    ),
    (
        "other",
        "eth private key "
        "2da528bd0443508e625562987ed7478e2f705d419e7e95f5799240f08fa32ca7 (wallet "
        "with the nft stuff)",
    ),
    ("other", "redis://:r3d1sP4ss_prod@10.1.4.22:6379/0"),
    (
        "other",
        "-----BEGIN OPENSSH PRIVATE "
        "KEY-----\nb3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtzc2g"
        "tZW\n8X+nQ4E/q2Gq3ikiBx3ndPGLXx1rikf86TkuuhUYINPJY4nvrEDP7noAySJKf4lR\n-----EN"
        "D "
        "OPENSSH PRIVATE KEY-----",
    ),
    (
        "other",
        "curl -H 'Authorization: Basic ZGVwbG95OlZ0OSNxTG0yeFJ3' https://ci.brightbakery.co/api",
    ),
    (
        "other",
        "24-word recovery phrase for the ledger: athlete bargain awkward bench "
        "alcohol bubble arena bitter airport burden actual blanket broccoli amateur "
        "bonus alien brass attitude battle arrange buffalo anchor brief autumn",
    ),
    ("other", "JWT_SECRET=96NSJL6AmHJBDq4rHsqU3boz"),
    (
        "other",
        "сид-фраза от кошелька: walnut galaxy harvest canvas tiger napkin eager "
        "lemon quantum dolphin salad jungle",
    ),
    ("other", "строка подключения к базе: mysql://bitrix:Btrx_2024pass@192.168.1.20/sitemanager"),
    ("other", "amqp://rabbit:K0lbasa_99@mq.local:5672/ — брокер на проде"),
    (
        "other",
        "приватный ключ биткоин-кошелька (WIF) "
        "L2QqXPuVyWELS3csjrmXww6DXnAenjgcio4wVWcqrbVBmJ6hUjTq",
    ),
    ("other", "в .env на проде: SMTP_PASSWORD=d7ggFMPA8X4rF2htZdjz912k7piY2GNM"),
    (
        "other",
        "ключ от сервера оплаты:\n-----BEGIN EC PRIVATE "
        "KEY-----\nMHcCAQEEIK4+CDgyoKQGOrBs+zxOQfsvQIBQernwn4R3u8rsgt/LN\n-----END EC "
        "PRIVATE KEY-----",
    ),
    (
        "other",
        "заголовок для API банка: Authorization: Bearer "
        "eyJhbGciOiJSUzI1NiIsInR5cCI6IkpXVCJ9.eyJ1aWQiOiA5MDQxNywgInNjb3BlIjogInBheW1"
        "lbnRzIn0.gD9wBtCbr3A-M-lv1sd5UpW1bkzbXm1MgIjTRZPCJDoH6sQDt5p5sXpEzv1yIgHM",
    ),
    ("other", "ссылка с логином прямо в урле: https://admin:Parol_Sklad1@sklad.local/api/v2"),
    (
        "other",
        "mongodb+srv://appuser:Mng_8f3kQ2@cluster0.ab1cd.mongodb.net/prod — это монга магазина",
    ),
    (
        "other",
        "сид фраза 24 слова: balcony apology bless abstract barrel ahead bottom "
        "artwork brain acid butter analyst border attract bleak across bridge "
        "announce blade admit bean assault bulb awesome",
    ),
    (
        "other",
        "приватник от eth кошелька "
        "eb206e14c88770d4a40f681a1c7248dc903f6cca6c1bfc413f6e979394685565",
    ),
    (
        "other",
        "из продового .env: SECRET_KEY=hKTve9lsomLX_QXvDJHA1o5nUNs8Mi_Lj3Lu9vGrZq, DEBUG=False",
    ),
    (
        "provider",
        "User's OpenAI key for the side project: "
        "sk-e0OovvEpSqxhP1onvOozTYgwqBeFicGBOjT6lQfl2ATctrSa",
    ),
    (
        "provider",
        "Asked me to remember his Anthropic API key "
        "sk-ant-api03-26QMk6GHNQy_T-RF2vReBdwA0yAxIwFST_UgvHtUtkm7iqH8YiECVl1OigtQhnc"
        "bkL2SP4x7ilXAI6vgrhBaYDfQyKJUZAA",
    ),
    ("provider", "github token for the CI runner is ghp_LV8NO8nNQ4s5TJQ8RIcUkpvYQCclHvB5vEg3"),
    (
        "provider",
        "AWS access key AKIA3RECHZ5YFIWZOXPZ with secret "
        "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, region eu-west-1.",
    ),
    (
        "provider",
        "Her Stripe live key: "
        "sk_live_BUGF9beLVRvGCu7B0IBcI2VtcVkUlnTAZOoKFIke3ppmnpMhZanEilGLA2i4xuTt84Ed"
        "wqaBacx7mUHp58iKrlsYkGGEeeYbw1W",
    ),
    (
        "provider",
        "Slack bot token for the standup bot - "
        "xoxb-901570669789-2374544328491-RbkfYtok0zNjgr0dGRmSbUFY",
    ),
    (
        "provider",
        "SendGrid key he uses for the newsletter: "
        "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",
    ),
    (
        "provider",
        "huggingface token 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, he needs it for gated models",
    ),
    (
        "provider",
        "Twilio account ACa8cdee6f4ddd900bd786db5094b3901e, auth token "
        "29af53a2300d4310340061c89c2b2ed1.",
    ),
    ("provider", "Google Maps API key for her app is AIzaalmAv5CSbMfTWSUmC3yQozg5vIDdDcOqaw_"),
    ("provider", "api key for the weather service: wyPxRC9qNYboSBuHu1Ht0mvBsBYAZBPw"),
    (
        "provider",
        "Groq key he pasted so I can keep it: "
        "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",
    ),
    (
        "provider",
        "Fine-grained GitHub PAT for the blog repo: "
        "github_pat_03QzOmWEUoAiMae8LrSQ41_hNkN0XJGQRmtBwdeBStdQu2E8F5zkqHqkRdwVuX45u"
        "NgZrlhaJgxbigsphh",
    ),
    ("provider", "Mailgun private key is key-d3dfd700bc748475547ace2e12b2c5d8"),
    (
        "provider",
        "Токен Telegram-бота для напоминалки: 2305920651:AAWkc2b4dLX0tUVp1bzwh6IfAz2qeriAmeB",
    ),
    (
        "provider",
        "OAuth-токен Яндекс Диска: y0_c1RCY4KNznzhQ26n_K5tlCB9lIclnykXuxV-2w9aELkvMkhfMo10ImL",
    ),
    ("provider", "API-ключ Yandex Cloud для SpeechKit — AQVN2abGlLQ6WBFCWiRBroUPk734kQsKSdVSKHB4"),
    ("provider", "Секретный ключ магазина в ЮKassa: live_GYn9srD6uaCpUM5TOwiWewoCYV36D_HucHeu-Zsj"),
    (
        "provider",
        "Просил сохранить токен DigitalOcean: "
        "dop_v1_c5141397a42e58781a46dc6981437f7ae90d2a1b8fae947d199ccf77e1cffaa9",
    ),
    ("provider", "токен gitlab для деплоя glpat-YSJStJygftgyE4Dja90e"),
    ("provider", "Ключ API Ozon Seller: 263c2e32-3ad9-455e-869e-f09162e24c37, Client-Id 1843271"),
    ("provider", "npm-токен для публикации пакета: npm_eZ0S2xJawB7ft7LEZuSvUVrH6enFCDecHNlw"),
    (
        "provider",
        "Ключ OpenAI для рабочего проекта: "
        "sk-proj-xrS6peK2SfJ1T243wRAHPzNUThIMqtuQZdgREmPFaN2Sc1Nne39kmHaU6hLkP4qYl2ws"
        "YZ3NzWvMus7MkPxGATaLsh_1OVXIrynjl4WYxERoihHbzvzNa0RF",
    ),
    (
        "provider",
        "Токен сообщества ВК для бота: "
        "vk1.a.9Susb7BjtiSJ_z3MZTw5s5izmyWueyylYB-sBwphFaetGSqQYKD0e4-fxwTsEBJrrNp1kK"
        "WNaHbjz5NgAVX2kSzL3hskyphki1HCT2QSybhL2ihEnR-Kebm4FKI6dOKoi39ovTFmtlSFltLcW-"
        "M4Sr",
    ),
    ("provider", "токен от сервиса погоды 4dgqwXoFkvzh7VY4ckggZA4MmOrA5UJGacMYTa7I"),
    (
        "provider",
        "IAM-токен Яндекса на сегодня: "
        "t1.9euelZqPf6C_ndYq8FKq9rIYeDsBq1fd7uSgWuPu5jFZJ5B4mUFDYwaQGKiGGHmXESRXsLCmF"
        "WIKEAMcaQnqtvvnandbb6L4hzIxJ8yQvXfN4WbeW77Exz7gJn-GwBO",
    ),
    ("provider", "Ключ Replicate, попросила запомнить: r8_7EubNAicIdXZjV9iS6vIEC4cqVJtVD8dDm0uX"),
    ("password", "My email password is Lisbon#Tram28, please remember it."),
    ("password", "his netflix password: sunflower1987"),
    ("password", "Password for the family NAS is 'Kx7!pe29Rw'."),
    ("password", "Told me her laptop password, it's marmalade-otter-42"),
    ("password", "Bank app password = Qwerty2024$ (she knows it's weak)."),
    ("password", "Remember: the Steam password is dRag0nSlay3r!!"),
    ("password", "Wants me to keep his router admin password, which is admin_Tbilisi55"),
    ("password", "pasword for the work VPN is Fj38#kdLq"),
    ("password", 'The password on the encrypted backup drive is "correct-horse-57-lamp".'),
    ("password", "Пароль от почты — Sobaka_Rex77"),
    ("password", "пароль от госуслуг: Marina1984!ok"),
    ("password", "Попросил запомнить пароль от ноутбука: 5uper_Kot"),
    ("password", "Пароль от личного кабинета Сбера — Vesna#2023"),
    ("password", "Пароль к архиву с документами: ЗелёныйЧай42"),
    ("password", "Мастер-пароль от KeePass: Трактор-Луна-Сорок-7"),
    ("password", "пороль от стима lexa2009lexa"),
    ("password", "Пароль администратора в 1С: Buh_Glav_2022"),
    ("password", "Везде использует один и тот же пароль — qwerty123456, просила не забыть."),
    ("login_pair", "Login for the utility portal: ivan.k.berg@gmail.com / Harbor!552"),
    ("login_pair", "His Amazon account is tom.reyes84@outlook.com, password Tomato&Basil9"),
    ("login_pair", "username: jlee_design, password: Wq8#nLz2pQ (Behance account)"),
    ("login_pair", "Work Jira login is m.santos with password Sprint-2024-Go"),
    ("login_pair", "School portal for her son: user 'kid.aurora', pass 'rainbow77'"),
    ("login_pair", "She gave me her Instagram login @lena.bakes, pw cupcake$Lena91"),
    ("login_pair", "The home server: ssh as pi, password raspberry2k24"),
    ("login_pair", "Admin panel creds: admin@shopnest.io / Zx!93kd_Pq"),
    ("login_pair", "Логин от Госуслуг — +7 916 482-17-35, пароль Kalina_1978"),
    ("login_pair", "Почта: a.smirnova88@yandex.ru, пароль: Leto2019Sochi"),
    ("login_pair", "Для входа в Дневник.ру: логин petrov_mitya, пароль Mitya2012"),
    ("login_pair", "учётка в 1С: пользователь Бухгалтер2, пароль buh7788"),
    ("login_pair", "Логин от роутера admin, пароль Kv23-rostelecom"),
    ("login_pair", "Аккаунт на Авито: olga.v.fedorova@mail.ru / Avito!Olga55"),
    ("login_pair", "Вход в CRM: логин k.zaitsev, пароль Zaitsev#CRM1"),
    ("login_pair", "логин nikita_games пароль Nik1ta!!  это от стима"),
    ("login_pair", "VPN на работе: пользователь d.orlov, пароль Orl0v_Vpn"),
    ("wifi", "Home Wi-Fi: network 'Lisbon_Loft_5G', password tram28amarelo"),
    ("wifi", "wifi at the cabin is PineRidge, pw is mountainair99"),
    ("wifi", "Guest network 'Nguyen-Guest' - password is welcomehome2024"),
    ("wifi", "Office WiFi SSID: Acme-Staff, key: Acm3$taff!Net"),
    ("wifi", "remember my wifi password: bluefrog123 (network is TP-Link_4F2A)"),
    ("wifi", "Her parents' Wi-Fi is called 'Garcia Family' and the password is Paella1965."),
    ("wifi", "The coworking Wi-Fi HubSpace-Members uses password Hub#Coffee7"),
    ("wifi", "Wi-Fi name NETGEAR47, WPA2 key purplecanoe512"),
    ("wifi", "Airbnb wifi: SSID Casa_Azul, passcode azul2024casa"),
    ("wifi", "Домашний Wi-Fi: сеть Keenetic-8812, пароль 84jdk2lq"),
    ("wifi", "вайфай на даче называется Dacha_Ivanovy, пароль 12345qwert"),
    ("wifi", "Сеть на работе Office_Guest, пароль для гостей Gost2024!"),
    ("wifi", "Пароль от вайфая — lenochka1990, сеть называется MGTS_GPON_3A7F"),
    ("wifi", "Wi-Fi у бабушки: «Rostelecom_5G», пароль Babushka-Nina"),
    ("wifi", "Сеть ASUS_Home_5G, ключ WPA2: 7Yt!kp29zz"),
    ("wifi", "Вай-фай в съёмной квартире: TP-LINK_C0FE, пароль 40817263"),
    ("wifi", "имя сети Beeline_2G_F1C2 пароль vasya_net_77"),
    ("otp", "The SMS code from the bank is 482913, she asked me to type it in."),
    ("otp", "My SIM PIN is 7391."),
    ("otp", "PUK for the old SIM card: 51827364"),
    ("otp", "Debit card PIN 0642, don't tell anyone"),
    ("otp", "Door code for the building: 2580#"),
    ("otp", "Gate code at the storage unit is *4417"),
    ("otp", "2FA backup codes for Google: 8415 2093, 5521 7840, 3309 1186"),
    ("otp", "Verification code from Microsoft: 730 218"),
    ("otp", "Office safe combination is 32-17-08."),
    ("otp", "Код из СМС от Госуслуг: 583027"),
    ("otp", "Пин-код от карты Тинькофф — 3817"),
    ("otp", "Код домофона в подъезде: 27#4518"),
    ("otp", "Код от сейфа в кабинете — 604219"),
    ("otp", "Код подтверждения перевода: 9172, введи его за меня"),
    ("otp", "PUK-код сим-карты МегаФон: 36194825"),
    ("otp", "Код от калитки на даче 1945"),
    ("otp", "одноразовый код для входа в Сбер 447 190"),
    ("otp", "ПИН от симки 2468, постоянно его забываю"),
    ("identity", "SSN for the tax form: 529-38-4417"),
    ("identity", "Her social security number is 412 67 9083."),
    ("identity", "UK National Insurance number: JT 48 29 17 B"),
    ("identity", "Save my passport number for the visa form: 567319284 (US passport)"),
    ("identity", "UK driving licence number WALSH805138TR9XK"),
    ("identity", "Spanish DNI 16766231J, needed for the NIE appointment"),
    ("identity", "Green card number (A-number) A204771365"),
    ("identity", "California driver license D4827319, expires 2028"),
    ("identity", "Canadian passport no. HN482917"),
    ("identity", "Паспорт РФ: серия 4516 номер 738291"),
    ("identity", "Загранпаспорт 75 4829173, действует до 2031 года"),
    ("identity", "СНИЛС 479-287-599 75"),
    ("identity", "ИНН (личный): 705719342185"),
    ("identity", "Номер водительского удостоверения: 99 27 481936"),
    ("identity", "Вид на жительство: 82 № 4619037"),
    ("identity", "СНИЛС мамы — 850-964-607 35"),
    ("identity", "мой инн 629914529900 для налоговой"),
    ("identity", "паспорт 4010 482716, выдан в 2015 году"),
    ("card", "Visa 4840 9081 0752 5404, exp 09/28, CVV 417"),
    ("card", "Her Mastercard number is 5137188001403268, expires 03/27."),
    ("card", "Amex 3715 725689 44457 exp 11/29 CID 8812"),
    ("card", "Save my card for online shopping: 4709-6889-5004-4956, 12/26, cvc 093"),
    ("card", "IBAN for rent payments: DE91 7577 9244 8395 7806 93"),
    ("card", "His UK account IBAN is GB62NWBK48669436549176"),
    ("card", "Discover card 6011 4114 7784 4917 (exp 05/30)"),
    ("card", "Business Visa 4682003444585377 cvv 220"),
    ("card", "Dutch IBAN: NL04 RABO 7776 8446 15"),
    ("card", "Spanish bank IBAN ES73 7816 2877 0382 2758 9797"),
    ("card", "Карта Мир: 2200 2958 5910 9498, срок 08/29, CVV 615"),
    ("card", "номер карты сбера 2202946084987003"),
    ("card", "Карта Тинькофф 5352 5683 0427 8855, до 10/27, код на обороте 348"),
    ("card", "Зарплатная карта: 2204 8605 1043 4613"),
    ("card", "IBAN во Франции: FR94 4036 7247 10OF 5I6A 77AW V61"),
    ("card", "Реквизиты для перевода в Португалию: IBAN PT88 1665 0760 8085 9803 6806 3"),
    ("card", "Карта UnionPay 6203 7003 4162 0000, срок 01/30"),
    ("card", "Виртуальная карта 2221 7094 2917 8721, CVC 502"),
    ("card", "IBAN в Швейцарии CH29 0272 7688 1845 0917 8"),
    ("card", "Карта мужа 5504 3841 7699 9215, действует до 04/28"),
    ("card", "итальянский IBAN для оплаты аренды: IT24 X101 6390 2692 5767 8068 426"),
    ("card", "Карта Amex 3462 151110 80096"),
    (
        "other",
        "Pasted his deploy key: -----BEGIN OPENSSH PRIVATE KEY----- "
        "b3BlbnNzaC1rZXktdjEAAAAA/9DqdfDMsyj07TsMpXD3NGwwNJTqect51J1S8gN7IOuKCPRP5rX2"
        "JTzoKs4yf",
    ),
    (
        "other",
        "-----BEGIN RSA PRIVATE "
        "KEY-----\nMIIEowIBAAKCAQEALC2tFeZwHmq8WqwHg9AtMjVV0BRaIHWuVHY+uMGSPayCdY0VQQo"
        "8YGqs9eMFciHqFMddD8oWawj4nug51QEd64+5j3",
    ),
    ("other", "Prod database: postgres://app_user:Xk92!mq7@db.internal.acme.io:5432/orders"),
    ("other", "SECRET_KEY=django-insecure-k!ec!0uj0^b%(*xdbm5u*iu_hyuc4cbffnov-_-_3yw8-%o9k9"),
    ("other", "his .env has DB_USER=shop and DB_PASSWORD=t8Qm#41vPz"),
    (
        "other",
        "Seed phrase for the MetaMask wallet: banner kiwi wild legend now certain "
        "among fortune silk juice cook room",
    ),
    (
        "other",
        "ETH wallet private key 0x47f461c2c0b14b493930fa432af0647e08b60304fbeddf2741820af5d15a5aac",
    ),
    (
        "other",
        "Authorization: Bearer "
        "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.7Hoi87Hvnu7K9pG6DBCYgemSb0Cxmk0qudV6JeX"
        "huo7jKvsvp29CcyztLi8C.4-52Fku4_abIw2Z-uz83M1pr7sw4pK72nATglgoSBkJ",
    ),
    ("other", "queue URL is redis://:R3disP4ss_2024@cache.prod.local:6379/0"),
    ("other", "The staging API wants the header Authorization: Basic ZGVwbG95OkhhcmJvcjU1Mg=="),
    ("other", "Строка подключения к базе: mysql://root:Qaz123wsx@192.168.1.20:3306/crm"),
    (
        "other",
        "Сид-фраза от кошелька: universe room mesh upper faith install carpet timber "
        "rent universe melody spare",
    ),
    (
        "other",
        "Приватный ключ биткоин-кошелька (hex): "
        "bb9961cb61f75f95fc4c3ea63bc178f41b919f60fc7ec3d41e4080a68514d2ca",
    ),
    ("other", "В .env у него JWT_SECRET=5af855cef16fcc7e82bbb60abf6217ef5497cde202478602"),
    ("other", "Брокер сообщений: amqp://rabbit_admin:Kr0lik!88@mq.local:5672/"),
    (
        "other",
        "мнемоника для Trust Wallet — rival photo happy acoustic journey mobile "
        "frown gap car usual reunion aisle",
    ),
    ("other", "MongoDB: mongodb+srv://olga:Mongo_Olga7@cluster0.x7k2p.mongodb.net/shop"),
    ("other", "В настройках Django: EMAIL_HOST_PASSWORD=pochta_smtp_2024"),
    (
        "other",
        "Приватный ключ сервера: -----BEGIN EC PRIVATE KEY----- "
        "MHcCAQEEIBsqMrnVtZQ6rk0pX8dHe2yL4w9NfCjT1aK7uGm3sE5o",
    ),
    (
        "provider",
        "Mark pasted his OpenAI key so I'd remember it: "
        "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",
    ),
    (
        "provider",
        "Dana's GitHub personal access token for the family photo repo is "
        "ghp_DoFEoPAjFvBPi0SnUxI4PD6oFgeDNFpbJCMQ",
    ),
    (
        "provider",
        "Her bakery's Stripe secret key: "
        "sk_live_51vO3ghmNMhWLT005GXYTpvkHO2tNHyr4SYTOjARsIGlZIeREPAgYjjuoBrXlJjbSZ2u"
        "a1nPNNGQ8s0Md8ivw6H6XmvJN8a4",
    ),
    (
        "provider",
        "Tom's AWS access key is AKIA4UVHHMMFSO6EY2KW with secret "
        "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, used for the photo backup bucket.",
    ),
    (
        "provider",
        "The Slack bot token for Priya's team alerts is "
        "xoxb-468836747346-1767763713366-Kn8zUS076QR6DC8is8wXGRhP",
    ),
    (
        "provider",
        "My Anthropic API key for the side project: "
        "sk-ant-api03-ytK6Eo3Puj7Bz_g9qnFi2BjpfD5-D-Yll-2dm_tgcQ7uqfYVJAOHsgn0mKgMvU-"
        "gdbgP1V4bXeejJIWSvtl8xioq2vxGLAA",
    ),
    (
        "provider",
        "Leo set up SendGrid for the school newsletter; the API key is "
        "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",
    ),
    (
        "provider",
        "The API token for the weather station he runs in the garden is "
        "b15a70e492e275a26c73d2879fb57d00.",
    ),
    (
        "provider",
        "Shopify admin API access token for Grace's candle store: "
        "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",
    ),
    (
        "provider",
        "Twilio for the clinic reminders: account SID "
        "AC7c146cbaf9317a630bdd33606b368d06, auth token "
        "1bdf4257d30474f4c7a00c15238064eb",
    ),
    (
        "provider",
        "Ben's Notion integration secret for his reading list is "
        "ntn_uqW4nRwjgKmU3HwTe5pyaqkXAUOofG4G8XKJRnhaK3qEM8",
    ),
    (
        "provider",
        "I keep the project key for the new chatbot handy: "
        "sk-proj-QZVfh9g2elWjMeU71qF7ERL1pieiP1SQdHaB4hZ2CuPWfemF4DXDx5id1j2JXq5fT3Bl"
        "bkFJPvT-97qFnjBFmNr7OfOwc2Is_F4poMte",
    ),
    (
        "provider",
        "The Discord bot token for the kids' Minecraft server is "
        "mPGrF0dvkhwxlqFYNK1Rk4OR.Nevmkn.2CHEbiadhwILoWbNTAjTBNo5fBQexEIRuacvvm",
    ),
    (
        "provider",
        "Токен Telegram-бота для записи клиентов у Ольги: "
        "7556659485:AAp3Gt5GY1-KbdLRgUaHw2ufhuxbuX0xbVs",
    ),
    (
        "provider",
        "API-ключ Яндекс Облака, который Сергей использует для SpeechKit: "
        "AQVNxJCsx4lStdZdok3blQSSzra0vzLpDwiXFNWV",
    ),
    ("provider", "У Пети токен GitLab для рабочего репозитория — glpat-YBy8ABWXd-bVQ1qSuwJ9"),
    (
        "provider",
        "Мой токен Hugging Face: hf_TbmmnMqMPKVSbbVSUMsU4NSqK7Mhk3i23Y, с ним я качаю модели.",
    ),
    (
        "provider",
        "Ключ Google Maps API для сайта турагентства Марины — "
        "AIzaxKa8N0f85srGeT4a6KCA9aPFYRn2hf8ldor",
    ),
    (
        "provider",
        "Токен DigitalOcean, на котором крутится сервер интернет-магазина: "
        "dop_v1_a0e05e971e6a1947068dbfd02057542908865b5aa35480be83ec8eb2ab107c6d",
    ),
    (
        "provider",
        "Секретный ключ ЮKassa для магазина Ирины: "
        "live_iEdwIN3Iwo1HePweiv7VNnMqEJ2uHCtMvDZZdXQGHbg",
    ),
    (
        "provider",
        "OAuth-токен Яндекс Диска, который Андрей вставил в скрипт бэкапа: "
        "y0_AgAAAAABRr4MltmF6mmmisf9YWBfpfvSI0FuQzSggcfO78tjj3p3Tm2_0",
    ),
    ("provider", "Ключ API от CRM-системы салона красоты: k4PHO0diJjIl8eo9HffmvPqy1J1HwEUr"),
    (
        "provider",
        "Токен npm для публикации пакетов у Димы — npm_rHAlmFEfoDP7fjCfWgr2PLZEO8lbhC4Es4sH",
    ),
    (
        "provider",
        "Токен PyPI, которым Лёша выкладывает свою библиотеку: "
        "pypi-AgEIcHlwaS5vcmcfoTeNJA5nYWakIbKyi40GW0bNd7xy8BbSZTWAuinYR911WFdWGVbK7Wx"
        "JBv2",
    ),
    (
        "provider",
        "Токен бота для родительского чата 5 «Б»: 511052112:AAsM40c_ZcfnO_xHdPi-jck2eC87I2TZgFK",
    ),
    (
        "provider",
        "Секрет клиента Google OAuth для школьного сайта — 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",
    ),
    ("password", "Anna's password for the school parent portal is Sunflower2019!"),
    (
        "password",
        "Greg told me his laptop password is ihcoM_1987 — his cat's name backwards plus the year.",
    ),
    ("password", "The password to the shared family Netflix is bluebird-kitchen-42."),
    (
        "password",
        "Her new banking app password is byszJE2MxS$! and she asked me to keep it for her.",
    ),
    (
        "password",
        "The admin password for the office router is PMBaVsfM!DVw, set by the IT guy last week.",
    ),
    ("password", "Password for the encrypted USB stick with the tax documents: tQDOahNL%kcB"),
    ("password", "Sam's Steam password is GreenDragon77 — he wants a reminder if he forgets it."),
    ("password", "I use Marmalade!Train9 as the password for my Kindle account."),
    ("password", "The BIOS password on Dad's old ThinkPad is 4471kasha; he set it years ago."),
    ("password", "Пароль от Госуслуг у мамы — Ромашка1965!"),
    ("password", "Мой пароль от почты: kotik_murzik2011"),
    ("password", "У Пети пароль на ноутбуке rgW4ys1TvT0D, он записал его на стикере."),
    ("password", "Пароль от Сбербанк Онлайн у Лены: Lena_Sber#88"),
    ("password", "Пароль к архиву с бухгалтерией за 2023 год — HcGnPk3UbJ%6"),
    ("password", "Пароль администратора 1С в магазине: Склад2024!"),
    ("password", "Бабушкин пароль от Одноклассников — внук2015, всё маленькими буквами."),
    ("password", "Пароль для входа в электронный дневник сына — Shkola_5b_2024"),
    ("password", "Мастер-пароль от KeePass у Андрея: axokbAnqHbOv"),
    (
        "login_pair",
        "Anna logs into the school portal as anna.petrova@gmail.com with password Violet#2020.",
    ),
    ("login_pair", "Username jmiller84, password Tr0mbone!x — that's Jake's work VPN."),
    ("login_pair", "Her Amazon account: email lucy.h@outlook.com, password Apricot_tree5."),
    (
        "login_pair",
        "The WordPress admin for the bakery site is login admin_bread, pass Crumb$2023!",
    ),
    ("login_pair", "My Instagram login is travel.with.kate and the password is Lisbon2019!!"),
    ("login_pair", "Dad's online banking: customer ID 48213377, password Harbor!Lights9."),
    ("login_pair", "For the clinic's patient portal Mike signs in with m.oconnor / Rainier_1975."),
    ("login_pair", "Office printer web panel: user admin, password Pr1nter!2023."),
    ("login_pair", "Логин от Госуслуг у папы — телефон +79167204418, пароль Dacha_2018"),
    ("login_pair", "Почта olga.smirnova@yandex.ru, пароль Olya1990!"),
    ("login_pair", "Логин в 1С: buh_irina, пароль Irina2023#"),
    ("login_pair", "У Пети аккаунт в Steam: petya_gamer07, пароль Minecraft!77"),
    ("login_pair", "Вход в админку сайта доставки: логин manager, пароль Zakaz$2024"),
    ("login_pair", "Электронный дневник: логин ivanov_s2014, пароль школа123"),
    ("login_pair", "Для входа в роутер у бабушки: пользователь admin, пароль Babushka1950"),
    ("login_pair", "Рабочий VPN Андрея — пользователь a.kuznetsov, пароль Vpn-Secure#31"),
    ("wifi", "Home Wi-Fi at Anna's: network TP-Link_4F2A, password sunflower88."),
    ("wifi", "The café's staff wifi is BeanThere_Staff and the key is latte2023!"),
    ("wifi", "My parents' network is called Sokolov Family, password 19651970dacha."),
    ("wifi", "Office guest Wi-Fi SSID Northwind-Guest, WPA2 password Welcome@Northwind24."),
    ("wifi", "Airbnb in Lisbon: Wi-Fi MEO-7C21B0, pass 8f2ka9wq."),
    ("wifi", "The wifi at Tom's place is FBI Surveillance Van and the password is notthefbi2020."),
    (
        "wifi",
        "WIFI:T:WPA;S:Grandma_Home;P:pierogi1948;; is the text in the QR code on Grandma's router.",
    ),
    ("wifi", "The clinic's internal network MedNet-5G uses the password Ch4rtRoom!"),
    ("wifi", "Вайфай у бабушки: сеть Keenetic-4821, пароль 12345678babushka"),
    ("wifi", "Wi-Fi на даче называется Dacha_Sokolovy, пароль — solnce2019"),
    ("wifi", "В офисе сеть Office_5G, пароль от неё Buhgalteriya2024"),
    ("wifi", "Сеть в съёмной квартире в Сочи: MGTS_GPON_A7F3, пароль x7Kp2mQa"),
    ("wifi", "У Пети дома сеть Petya_Home, ключ WPA2 — 89hfk2la"),
    ("wifi", "Гостевой Wi-Fi в школе: SSID School17-Guest, пароль Uchitel2023"),
    ("wifi", "Домашний роутер: имя сети RT-WiFi-93B2, пароль от сети 7xe4kdnc"),
    ("wifi", "Мой вайфай называется Kvartira_42, пароль murka2016"),
    ("otp", "The SMS code the bank just sent Anna is 482913."),
    ("otp", "Tom's phone unlock PIN is 2580."),
    ("otp", "My debit card PIN is 7319, in case I forget it at the shop."),
    ("otp", "The door code for the building on Elm Street is 4#1972."),
    ("otp", "Backup 2FA codes for his Google account: 8361 2049, 5518 7730, 9042 1166."),
    ("otp", "Her SIM PUK is 38920417 — she locked the SIM again."),
    ("otp", "The garage gate code is 0614, and the bedroom safe opens with 27-45-13."),
    ("otp", "Verification code for Lily's Microsoft login: 715 204, valid for 10 minutes."),
    ("otp", "Код из СМС для подтверждения перевода — 5831"),
    ("otp", "ПИН-код от карты Сбера у мамы: 4096"),
    ("otp", "Код домофона у Пети: 47#3580"),
    ("otp", "Код от сейфа в офисе — 19-37-82"),
    ("otp", "PUK-код от симки МТС: 70912583"),
    ("otp", "Одноразовый код для входа на Госуслуги: 384 211"),
    ("otp", "Код получения посылки в постамате Ozon — 962417"),
    ("otp", "Код от калитки на даче 1945, а от ворот гаража 3311"),
    ("otp", "Код подтверждения ВКонтакте, который пришёл Лене: 602 918"),
    ("identity", "Anna's SSN is 512-68-3047."),
    ("identity", "His National Insurance number is JT 58 41 90 C."),
    ("identity", "My US passport number is 583920174, issued in 2021."),
    ("identity", "Her UK driving licence number is MORGA753116SM9IJ."),
    ("identity", "Carlos's Spanish DNI, needed for the rental form: 89810258L."),
    ("identity", "Mei's Canadian social insurance number is 486 723 786."),
    ("identity", "Lukas's German ID card (Personalausweis) number is L7F4K9M21."),
    ("identity", "Her biometric residence permit number is ZU5912048."),
    ("identity", "Jake's California driver license number: D4829173."),
    ("identity", "Паспорт Анны: серия 45 12, номер 345678, выдан ОВД Тверского района."),
    ("identity", "СНИЛС у Пети — 254-359-613 87"),
    ("identity", "Мой СНИЛС: 370-044-547 48"),
    ("identity", "СНИЛС бабушки для поликлиники: 382-447-322 91"),
    ("identity", "ИНН Ольги (личный) 774834380907, нужен для налогового вычета."),
    ("identity", "Личный ИНН папы — 784240986627"),
    ("identity", "ИНН Марины как физлица: 506660851820"),
    ("identity", "Номер загранпаспорта Сергея: 75 4812937, действует до 2031 года."),
    ("identity", "Водительское удостоверение Ирины: 99 12 583041"),
    ("identity", "Вид на жительство Азиза: серия 82, номер 1597364"),
    ("identity", "Номер удостоверения личности Айгерим (Казахстан): 045812736"),
    ("card", "Anna's Visa: 4471 6468 7305 3096, exp 08/27, CVV 412."),
    ("card", "Mastercard for the family trip: 5242 1469 5380 1501, valid thru 11/26."),
    ("card", "Tom's Amex is 3760 336582 49336, security code 7714."),
    ("card", "My business debit card number is 4086123744913269, CVC 093."),
    ("card", "The new Mastercard Dad got is 2581 5407 5984 2618, expires 04/29."),
    ("card", "UnionPay card he opened in Shanghai: 6201 0432 8595 4875."),
    ("card", "Her salary goes to IBAN DE93 9608 3644 8295 8762 00."),
    ("card", "Transfer the rent to GB31 MIDL 1831 6217 5932 80, that's Priya's account."),
    ("card", "Dutch account for the freelance invoices: NL53 RABO 5209 5758 70."),
    ("card", "Carlos's Spanish IBAN for the deposit refund: ES39 8280 7421 2692 1025 3520"),
    ("card", "Swiss account for the nanny's salary: CH19 2899 8388 4892 9561 9"),
    ("card", "Карта Мир у мамы: 2200 4206 4513 4556, срок 05/28, CVC 318"),
    ("card", "Номер моей карты Тинькофф — 5439 9143 1939 6687"),
    ("card", "Карта Пети для перевода: 4421042715781121, действует до 09/26, код на обороте 571"),
    ("card", "Зарплатная карта Мир Ирины: 2202 1492 2455 0522"),
    ("card", "Кредитка Сергея: 5144 6641 8067 8640, 12/27, CVV 864"),
    ("card", "Карта Мир для оплаты коммуналки — 2204 9663 8532 5370, срок 03/29"),
    ("card", "IBAN для перевода Айгерим в Казахстан: KZ63 959P 5EWQ M3EG CRIK"),
    ("card", "Счёт Андрея в турецком банке: TR53 6072 9013 3437 1294 1528 37"),
    ("card", "IBAN немецкого счёта Лены: DE08 7172 5153 7754 1171 84"),
    ("card", "Грузинский счёт в TBC, куда Оля получает фриланс: GE40 TB70 0292 8696 4700 93"),
    (
        "other",
        "Ben's SSH key for the home server:\n-----BEGIN OPENSSH PRIVATE "
        "KEY-----\nb3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtzc2g"
        "tZW\nBYcLKzRy7mWrbWKrVKTaQvfV6Fhjl5M7sE7E15bPeX4gjmuuY3Zq+Epq6QH4FxVHYQOeAe\n-"
        "----END "
        "OPENSSH PRIVATE KEY-----",
    ),
    (
        "other",
        "The bakery app connects to "
        "postgres://bakery_admin:Cr0issant!88@db.sweetcrumb.local:5432/orders",
    ),
    (
        "other",
        "From her .env file: "
        "DJANGO_SECRET_KEY=django-insecure-74+6of0dj&0@s#6d$&bo!0#66a9^78_pay!mnv(uk1"
        "p--ht0g=",
    ),
    (
        "other",
        "Tom's crypto wallet recovery phrase: orbit velvet harvest lemon canyon "
        "tiger puzzle frost ribbon ocean bridge winter",
    ),
    (
        "other",
        "The MetaMask private key for Leo's wallet is "
        "0xe8e6edde458d22230dc8be0c425d65c6131822f1dc8a3c924f394b5896ce40d0",
    ),
    (
        "other",
        "He calls the clinic API with Authorization: Bearer "
        "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.3kEHTtULCgtw8tlUV1ApWEcT22F_PXiEIJyX7P4"
        "wsTiZBCf8HhWc8x9UbZTR.Hje06YFifh87lFcTw4hc7nOhi8ZHShQbl9BkOPL4z4n",
    ),
    (
        "other",
        ".env for the school site: "
        "SECRET_KEY=!0^7oi4ojwz+zug7-9@%7&t^f+!2=x5xpkwv&cs+uq#4h-ij@0 and "
        "EMAIL_HOST_PASSWORD=Chalkboard22",
    ),
    (
        "other",
        "The recipe app reaches its database via "
        "mongodb+srv://kate:Lisbon2019pass@cluster0.ab12c.mongodb.net/recipes",
    ),
    ("other", "Line from Dana's .env: DATABASE_URL=mysql://shop:Widget#2024@127.0.0.1:3306/shop"),
    (
        "other",
        "Ключ для сервера бухгалтерии:\n-----BEGIN RSA PRIVATE "
        "KEY-----\nMIIEowIBAAKCAQEA4RaordGwCTYkT0bQZNS2nScxA9D3TMrmm0GElM1KndDx5ZkhkyV"
        "FzR1I\nazNR65VMUQ7+U2BYcLKzRy7mWrbWKrVKTaQvfV6Fhjl5M7sE\n-----END "
        "RSA PRIVATE KEY-----",
    ),
    ("other", "Очередь заказов в магазине: amqp://shop:Rabbit_2024@10.0.0.15:5672/"),
    ("other", "Кэш сайта Пети подключён так: redis://:Kesh!pass99@192.168.1.20:6379/0"),
    (
        "other",
        "Сид-фраза от кошелька Андрея: garden monkey silver planet rocket zebra "
        "apple lunar thunder cabin salmon violin",
    ),
    (
        "other",
        "Приватный ключ кошелька Trust Wallet у Пети: "
        "ecfc4e638d273f33ef514e9f2d950732d435d2e6f95805a78c52b2afd21f1142",
    ),
    ("other", "Заголовок для API склада: Authorization: Basic c2tsYWQ6U2tsYWQhMjAyNA=="),
    (
        "other",
        "В .env на сервере магазина: DB_PASSWORD=Sklad#2024 и "
        "JWT_SECRET=eb8450ae2a1c5ed5571342c3967d286c",
    ),
    (
        "other",
        "12 слов для восстановления кошелька Лены: hybrid medal onion pistol quantum "
        "rabbit scatter tobacco umbrella vacuum wagon youth",
    ),
    ("other", "Строка подключения к базе зарплаты: postgresql://buh:Buh2023!@srv-1c:5432/zup"),
    (
        "other",
        "Токен в заголовке запросов к API поликлиники: Authorization: Bearer "
        "eyJhbGciOiJSUzI1NiIsImtpZCI6IjEifQ.Dqyq5d2LVYpgQJBoIvbonRzrKAHqlzA2Neeo9AOpw"
        "C-82ljLyN.rK8yXbIVYedqAD-zIs-IQPRWWYuUTFyXRP45IJNYmU1",
    ),
    (
        "provider",
        "He pasted his OpenAI key into the chat so I could debug the script: "
        "sk-proj-hEL2cIqgZvM4j9ON89L8X0e3s2I9jHapwE2FxUBBxE7m7w9P",
    ),
    (
        "provider",
        "The GitHub token for the family photo backup repo is "
        "ghp_Tch50FKWMv05LwB2DmV24wX6YRd7tmF6TX1x, he said it never expires.",
    ),
    (
        "provider",
        "Maria's online shop runs on Stripe and the live secret key she shared is "
        "'sk_live_51jNvWeKTTJ1OHZT7dri7fEMfHizh4lmvdvGBxlXhEpOmtjt'.",
    ),
    (
        "provider",
        "AWS access key AKIAIFIBRXQYVWMKJYMX with secret "
        "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 is what his NAS uses for S3 "
        "backups.",
    ),
    (
        "provider",
        "For the Discord bot on his gaming server he uses the token "
        "MT9QhzbBquZDa0PKHghxOjXBG8.CNyuWV.8rUkiP8EMaKpOmdAxTywsJv30Z6qm6mwhZlDCI",
    ),
    (
        "provider",
        "A Slack bot (xoxb-57812266621-8502565752507-AlibxqTRUIMbegAakXv5pfv3) posts "
        "the daily sales report for her bakery.",
    ),
    (
        "provider",
        "I saved the school robotics project's Hugging Face token as "
        "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.",
    ),
    (
        "provider",
        "Their newsletter goes out through SendGrid, API key "
        "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",
    ),
    ("provider", "API key for the weather station service: ydjBtWyH3EOf51Jbt6fZs5RfWF2cprKx"),
    (
        "provider",
        "He keeps his Anthropic key in a notes app, and it's "
        "sk-ant-api03-o7YCUUcMd7axYL3IrPzMeNx0Ob_KiRGL1Guocyp_1-Fjt8AVL1aqRhTIVtVMWOH"
        "WhZ2PkDOEyB5ldiGwtCWx8LX01fGjXAA",
    ),
    (
        "provider",
        "Twilio for the clinic reminders: account "
        "ACc40c65316b8293be91bf409434a28eeb, auth token "
        "80af482997073b26e3b8ba28c85de1d9.",
    ),
    (
        "provider",
        "Mailgun sends the invoices; the private API key he gave me is "
        "key-175d74b54882dd0685b34dfdce580721.",
    ),
    (
        "provider",
        "Токен Telegram-бота для записи клиентов в салон: "
        "1033622774:AAH4zI2LyuDjzvvZU8Sq132e6wqx_lfysms",
    ),
    (
        "provider",
        "Ключ Google Maps для сайта турагентства — "
        "AIzaLWPxi86s8MrXEb64iMkTNwURA3UOXAeEZWy, она просила его не потерять.",
    ),
    (
        "provider",
        "Для деплоя на DigitalOcean сын использует токен "
        "dop_v1_05fd5fcdaabef92258678bcdba9bc971150af7045150709f656ebfc2971ee0e4.",
    ),
    (
        "provider",
        "OAuth-токен Яндекс.Диска "
        "y0_AgAAAAvz656-3mF2NoYk6obIAfZoiornl2Bs9raVMD8PYHDYwiSnU4J он вставил прямо "
        "в скрипт резервного копирования.",
    ),
    (
        "provider",
        "У интернет-магазина на Shopify админ-токен «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».",
    ),
    ("provider", "Токен GitLab (glpat-CJvFjZ02OtVrU1mO9Mjg) нужен ему для CI в рабочем проекте."),
    (
        "provider",
        "Токен Тинькофф Инвестиций для торгового робота: "
        "t.ePdd-sU5oGpGeM5U2m8c96ounSvQkQTTEunwk1vkQBQweaKCombEGlqoltUQKfnuypQ8i-QrXD"
        "SZJyNveUtOiQ",
    ),
    (
        "provider",
        "npm-токен для публикации пакета он записал как npm_jmSykQCWkhUoZ7PbyxlBUKYmfQruN8330z4Y.",
    ),
    (
        "provider",
        "Распознавание речи в её боте работает через Яндекс Облако, API-ключ — "
        "AQVN1vWF_owVzmW6RGBoIABGIDPPZ1Nlh-JuTBe2.",
    ),
    ("provider", "Подрядчик дал ключ к API бухгалтерии, вот он: qZ7xZ2MrMULekSKAMaOSpM5l8vgz"),
    (
        "provider",
        "Fine-grained токен GitHub для рабочего репозитория, истекает через 90 дней: "
        "github_pat_1142VL0ATFN0AYvvaicx7OKb_Tnk3LEH6G0nfiLrJEGOZuIX8xb8vGQ5Gowkhg8am"
        "GuPlDjx5zdML56hqUff",
    ),
    (
        "provider",
        "Токен для загрузки пакета на PyPI: "
        "pypi-AgEIcHlwaS5vcmchdynPy1ovGwswKxpHsI6_fLwz_GDSgJfglOwPV5081VNejpDr8GliDoY"
        "Gd6O",
    ),
    (
        "password",
        "Her Gmail password is Lavender#Hill42, she asked me to remind her if she forgets it.",
    ),
    ("password", "He set the laptop admin password to 'tr0mb0ne-Sunday'."),
    ("password", "The family Netflix account password: Pickles2016!"),
    ("password", "I changed my Steam password yesterday, the new one is vK8$mq2Lz!pR."),
    ("password", "sLHIfiOSYAvJ — that's the password for the router admin page, according to him."),
    ("password", "The shared drive at work opens with the password &YNEpPZjA0LV."),
    (
        "password",
        "My banking app password is now Bluebird_1974, same as my old email, which I know is bad.",
    ),
    ("password", "His PlayStation Network password, he says, is 'MorkovkaRunner77'."),
    (
        "password",
        "Use 'Oc3an!Breeze' as the password for the PDF with the tax return, she "
        "told her accountant.",
    ),
    ("password", "Пароль от Госуслуг у мамы — Ромашка_1958!"),
    ("password", "Он сказал, что пароль от рабочего ноутбука теперь 5hZeFM3C&P04."),
    ("password", "Пароль к архиву с документами на квартиру: «Зима2024-Снег»."),
    ("password", "Мой пароль от Сбербанк Онлайн — Kotik_Murzik88, записала сюда, чтобы не забыть."),
    ("password", "Для почты на Яндексе она придумала пароль syUARK%sEbjU."),
    ("password", "Админку сайта кофейни он перевёл на новый пароль (qwe!Rty_2025Kofe)."),
    ("password", "От ноутбука дочери пароль «пингвин1234», она его сама выбрала."),
    ("password", "Новый пароль для 1С у главного бухгалтера — Buh-Glav#7731."),
    ("password", "Пароль от рабочего VPN: AUol0b7ifyAd, так сказал коллега."),
    ("login_pair", "Login for the school portal: emma.w2011, password Gr8Reader!"),
    (
        "login_pair",
        "His work email is d.hartley@northwindlogistics.com and the password he uses "
        "there is Falcon-9-Launch.",
    ),
    (
        "login_pair",
        "Username ryan_plays, password 'Zx81!qqw' — that's his Roblox account he "
        "wants me to remember.",
    ),
    (
        "login_pair",
        "Credentials for the router are admin / Hx72kpWq!9, he changed them from the default.",
    ),
    (
        "login_pair",
        "Her Amazon account is lindsey.moore84@gmail.com with the password Rainy$Days2020.",
    ),
    ("login_pair", "Dad's Facebook: login george.p.1952@yahoo.com, pass Tulip1952."),
    (
        "login_pair",
        "Staff account for the new hire at the shop: user sarah@bloomandbean.co, "
        "password Welcome2Bloom!",
    ),
    ("login_pair", "For the VPN he signs in as k.novak with the password N0vak#Remote."),
    (
        "login_pair",
        "The landlord portal accepts tenant login 'apt4b-jones' and the password 'Keys4Days!'.",
    ),
    ("login_pair", "Логин от личного кабинета МТС — 9164821907, пароль Mts_Dom2023."),
    ("login_pair", "Почта сына: artem.sokolov2009@mail.ru, пароль — Minecraft_Artem09."),
    ("login_pair", "Для входа в Дневник.ру логин ivanova_masha, пароль Shkola5_pyaterka."),
    ("login_pair", "Логин ivanov_d, пароль Qwerty!2024 — это от рабочего портала."),
    ("login_pair", "В 1С он заходит под пользователем «Кладовщик» с паролем склад777."),
    ("login_pair", "Учётка на Авито: olga.petrova.spb@yandex.ru / Avito_Olga#12"),
    ("login_pair", "Аккаунт Steam: логин tank_destroyer_rus, пароль Tigr1945Tank."),
    (
        "login_pair",
        "В личный кабинет Wildberries она входит по номеру +79034815527 и паролю WbPokupki_22.",
    ),
    ("wifi", "Wi-Fi at the lake house: network 'Maple_Cabin', password pinecone1987."),
    ("wifi", "The office guest Wi-Fi is BloomBean-Guest and the key is coffee4everyone."),
    ("wifi", "WIFI:T:WPA;S:Hartley_Home_5G;P:Gh7#kk29pL;;"),
    (
        "wifi",
        "Grandma's network is called TP-Link_4F2A, password 73920418 (printed on the "
        "router, she never changed it).",
    ),
    ("wifi", "SSID: NETGEAR-Dan, WPA2 passphrase: blue-otter-canoe"),
    ("wifi", "Hotel Wi-Fi in Lisbon was 'Alfama_Suites' with the password 'Sardinhas2024'."),
    (
        "wifi",
        "He asked me to remember the QR text from his fridge: "
        "WIFI:S:Garage_IoT;T:WPA;P:solder&sparks;H:false;;",
    ),
    ("wifi", "For the school lab Wi-Fi (RoomB12-Lab) the password is Photosynthesis!"),
    ("wifi", "Wi-Fi на даче: сеть Dacha_Keenetic, пароль podsolnuh2023."),
    ("wifi", "Пароль от вайфая дома — 89164820, сеть называется Rostelecom_7C1D."),
    ("wifi", "Гостевая сеть в кофейне «Зерно» — Zerno_Guest, ключ kapuchino55."),
    ("wifi", "В офисе сеть OfficeNet-2, пароль от неё Sklad!2022Wifi."),
    ("wifi", "QR-код на роутере у родителей: WIFI:T:WPA;S:MGTS_GPON_8B3E;P:7kD4mQ2x;;"),
    ("wifi", "Сеть «Квартира 48», пароль к Wi-Fi — Кошка2019 (кириллицей, она так настроила)."),
    ("wifi", "Для умных розеток он завёл отдельную сеть SmartHome_2G с паролем iot_zamok_88."),
    ("wifi", "Вайфай в отеле в Сочи: сеть Hotel_Morskoy, пароль more2024."),
    ("otp", "The bank sent her a confirmation code 482913 for the transfer and she typed it here."),
    ("otp", "His debit card PIN is 7306."),
    ("otp", "Gate code for the new apartment complex: 4519#"),
    ("otp", "Backup codes for her Google account: 8f3k-2m9q, 7hd2-pq81, zz4r-01km."),
    ("otp", "The keypad on the Airbnb front door opens with 8264, then you press the lock button."),
    ("otp", "The authenticator shows 591 047 right now for his Binance login."),
    ("otp", "According to the plastic holder, the SIM card PUK is 84920175."),
    ("otp", "Amazon locker pickup code 738512, valid until Friday."),
    ("otp", "He set the hotel room safe to 9142."),
    ("otp", "Код из СМС для входа в Госуслуги: 3817."),
    ("otp", "Код домофона у бабушки — 48*2719, квартира на третьем этаже."),
    ("otp", "ПИН-код от карты Мир: 5521, она попросила запомнить."),
    ("otp", "Код для получения в постамате Ozon — 604 118."),
    ("otp", "Резервные коды двухфакторки ВКонтакте: 284019, 557310, 903846."),
    ("otp", "Пришёл код подтверждения перевода 774920, он продиктовал его мне."),
    ("otp", "Калитка на участке открывается кодом 0612, а ворота гаража — 3390."),
    ("otp", "PUK-код от симки МегаФон (19384726) она нашла в старом конверте."),
    ("otp", "Код от сейфа в бухгалтерии — 8315."),
    ("otp", "Steam Guard прислал код 7KX2P, он попросил ввести его за него."),
    ("identity", "His US passport number is 583920174, it expires in 2031."),
    ("identity", "His Social Security number is 418-62-9037."),
    ("identity", "Canadian SIN for the tax form: 298 923 780"),
    (
        "identity",
        "She needed her National Insurance number, JK 48 19 27 B, for the new job in Leeds.",
    ),
    ("identity", "UK passport no. 124793581 for the visa application."),
    ("identity", "Her German ID card (Personalausweis) number is L7KM2R9F4."),
    ("identity", "UK driving licence number HARTL806152DJ9KL, photocard valid until 2030."),
    ("identity", "California driver license D4829173, expires on her birthday in 2028."),
    ("identity", "Spanish DNI 21427230Q goes into the apartment rental contract."),
    ("identity", "Her French passport number is 19AV48213."),
    ("identity", "Indian passport no. K4829107, issued in Pune."),
    ("identity", "Паспорт РФ: серия 45 17, номер 638204, выдан ГУ МВД России по г. Москве."),
    ("identity", "СНИЛС мамы — 726-391-272 08."),
    ("identity", "ИНН (личный): 777710663538 — нужен для налогового вычета."),
    ("identity", "Загранпаспорт сына 75 № 4821937, действует до 2029 года."),
    ("identity", "Водительское удостоверение 99 23 481705, категория B."),
    ("identity", "Номер ВНЖ у жены — 82 № 4718205."),
    ("identity", "В заявлении на пособие указали СНИЛС 075-701-744 69."),
    ("identity", "Мой ИНН 326706631338, это для регистрации самозанятости."),
    ("identity", "Номер украинской ID-карты у тёти: 004829173."),
    ("card", "Her Visa card 4000 0030 3802 0117, exp 09/27, CVV 418."),
    ("card", "He booked the flights with Mastercard 5158764601897572 (expires 03/28)."),
    ("card", "The Amex on file for the bakery supplier is 3757 207584 35564, CID 7712."),
    ("card", "My IBAN is GB85 NWBK 6931 8601 3740 92, rent goes there."),
    ("card", "Send the deposit to IBAN DE18 4104 7692 8078 2506 27 (account of Jonas Weber)."),
    ("card", "Discover card 6011 0050 3029 3966, security code 221."),
    ("card", "Her Spanish account for the holiday flat: ES51 6472 2437 4037 7831 8355"),
    ("card", "Freelance invoices are paid to NL71RABO1847957708."),
    ("card", "The JCB card from the Japan trip, 3530116368305717, is still saved in the Uber app."),
    ("card", "The Paris landlord's IBAN is FR90 1222 9196 47A5 ECF8 35C0 140."),
    ("card", "Карта Сбера 4276 3806 0759 7114, срок 11/26, CVC 305."),
    ("card", "Номер карты для перевода — 2202 2018 9029 1616 (Мир, на имя Ольги)."),
    ("card", "Тинькофф Mastercard: 5536 9115 6531 0513, действует до 08/29."),
    ("card", "Карта мамы 2200702162567643, код на обороте 914."),
    ("card", "IBAN в швейцарском банке: CH95 5331 2211 7316 7087 2"),
    ("card", "Казахстанский счёт брата для перевода — KZ37 1104 6399 0057 3354."),
    ("card", "Счёт в Польше (IBAN) PL42 6009 4056 4855 9741 7586 8880 она дала арендатору."),
    ("card", "Карта UnionPay 6250 9443 0105 0632, срок 05/30."),
    ("card", "Для оплаты отеля в Италии указали IBAN IT09X8348906800837014448852."),
    ("card", "5469 5506 0100 5140 — её зарплатная карта, действует до 02/27, CVV 663."),
    (
        "other",
        "He pasted his server key: -----BEGIN OPENSSH PRIVATE KEY----- "
        "b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABhrgJjUikEpQho0BjC1NmxNwl"
        "PNftKR8kF5JzOp0EyGrIZAWEfWsl0j53 "
        "-----END OPENSSH PRIVATE KEY-----",
    ),
    (
        "other",
        "The shop's database URL is "
        "postgres://shopadmin:Tr1cky_Pass@db.bloomandbean.co:5432/orders",
    ),
    (
        "other",
        "The .env for his side project has "
        "SECRET_KEY=django-insecure-yhdnwbi=$%^cluvggqn++ysh2r4+$if+%)m0+4!h0!5z=1jk6"
        "m",
    ),
    (
        "other",
        "Her wallet seed phrase: orbit timber velvet caution harvest jungle pioneer "
        "ribbon glimpse frost elegant saddle.",
    ),
    (
        "other",
        "He wants to import his MetaMask private key "
        "f8b3f96fe63ad944b058b004ad14c987ec2f3f4e85b323b32834cc153284a059 on the new "
        "phone.",
    ),
    (
        "other",
        "The API call needs the header Authorization: Bearer "
        "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJT0fUAeVR4Nr9mG32x9NdWYTBszSiwme9O0kf"
        "mkeA.iitTpzon0FShXXknIriEUpDr0Wu585FF7m2edh5O-xZ",
    ),
    (
        "other",
        "RabbitMQ broker for the delivery app: amqp://courier:Parcel2024!@mq.internal.lan:5672/",
    ),
    (
        "other",
        "In his .env: DB_PASSWORD=Gx!83kslQ2 and REDIS_URL=redis://:Qm29xLp@localhost:6379/0",
    ),
    (
        "other",
        "-----BEGIN RSA PRIVATE KEY----- "
        "MIIEowIBAAKCAQEA5gVDThZwgKHyMkp7xGIyk8GLPcWWnUN/WmpPxR33I1jlxPbpn9h424lcYYES"
        "n+ewqZTjqXQasc8JyCaAgTveQgXZ9qXHO85 "
        "-----END RSA PRIVATE KEY-----",
    ),
    (
        "other",
        "The 12 recovery words for his Trezor are brave canyon dolphin eagle fabric "
        "galaxy hazard island jacket kitten ladder marble.",
    ),
    (
        "other",
        "Сид-фраза кошелька: napkin oyster pepper quantum rocket sponsor tunnel "
        "umbrella vessel walnut yellow zebra — записал сюда на всякий случай.",
    ),
    (
        "other",
        "Строка подключения к базе магазина: mysql://root:Magazin_2023@192.168.1.20:3306/shop",
    ),
    (
        "other",
        "Приватный ключ от ETH-кошелька: "
        "8e185648e2091f15dbd383f4ad72d62446a8ec6adb885f7cd3db9a218b7d036e.",
    ),
    (
        "other",
        "В settings.py у сына SECRET_KEY = '!hp07+vi68doyhz$q-$*+c1(vtp%svzj#687^0i-v3=vlossq_'",
    ),
    (
        "other",
        "Заголовок для запросов к API склада: Authorization: Basic a29zdHlhOlN1cGVyU2tsYWQyMDI0",
    ),
    (
        "other",
        "Мнемоника от Trust Wallet (12 слов): island jacket kitten ladder marble "
        "napkin oyster pepper frost elegant saddle tornado.",
    ),
    (
        "other",
        "Ключ от сервера с ботом: -----BEGIN EC PRIVATE KEY----- "
        "MHcCAQEEIOvkDLUCq2QNQ+xJEOcbIg/jNPVuDVWRw39jXgDWPdnnU1GCdEu25s3EdZ+IacA5MKMk"
        "b49qUGrHOrpmjf "
        "-----END EC PRIVATE KEY-----",
    ),
    (
        "other",
        "В .env у кофейни: EMAIL_HOST_PASSWORD=kofe_smtp_2024 и "
        "DATABASE_URL=postgres://kofe:Zerno!88@localhost/kofe",
    ),
    (
        "other",
        "Для API маркетплейса в заголовке нужно передавать Authorization: Bearer "
        "3759097f67d1d0a93afcaf75768c10c0dc12d155ac53d1847eea346710c3f5b0",
    ),
    (
        "provider",
        "DigitalOcean token for the droplet scripts: "
        "dop_v1_5035dae95f75fa38ddb10e67a333dac2c2cd8d71c48901e0636e09f5b5519c48",
    ),
    (
        "provider",
        "shopify admin api access token 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 for "
        "the store backend",
    ),
    (
        "provider",
        "The Linear key he uses for the triage bot is "
        "lin_api_Z9FCS74Hwkl2eOZ9qGY1bAAcIbISVUsQobrJ9dnI",
    ),
    (
        "provider",
        "Doppler service token (prd config): dp.st.prd.sCv9jpGiH9HaoEjvbrxIDBjz8lg2rHg6hcF3Wptfbxk",
    ),
    ("provider", "PULUMI_ACCESS_TOKEN=pul-7a01d6b5349f92ac8c0e67fde6847d883a03c2ec"),
    (
        "provider",
        "Jira API token: "
        "ATATT3xFfGF0h97XKXLrMfpXq-ySXpsgcTiZKtnjafo8cqHTirr7Fr-nxCVwHhljjHjNbdwOfi5F"
        "6CK2LbgBHRZhCk70B5QaovpH41r_2ivAo2tP64gQmLVfeCF8LkLfINqOgxrTXHdvclUzaH7O9UnZ"
        "Jgu0Kx3HW5SfmkfgsTf6I8VLbWQLZo=93FE065E",
    ),
    (
        "provider",
        "postman key "
        "PMAK-c1bc51c18850463f9fa65a0b-855ac04e36a52e56e04df67f6b2432a501 - the team "
        "workspace one",
    ),
    (
        "provider",
        "fly.io deploy token fo1_DuFxjoW7I2XfXgIuRo-34MTm7lRW-1CBY7JdBzPidNc (org: personal)",
    ),
    (
        "provider",
        "Render API key rnd_NMUOwLEbwRvJ3JVuwFFA1aOxGWhkqIPZ, it's used in the GitHub action",
    ),
    ("provider", "his supabase access token is sbp_c358d6678581cb3b73fcc326bfe91ce9ed60cde7"),
    (
        "provider",
        "Databricks PAT for the analytics workspace: dapi8e1fc112b2b38221b3960b5b8c8ec3db",
    ),
    (
        "provider",
        "Cloudflare API token with DNS edit scope: _TYCjtVNCLoa4XKOJWzX6chnFTJAWcqGJ9mJX98h",
    ),
    (
        "provider",
        "PlanetScale password for the main branch is "
        "pscale_pw_7NGcSxoVJamiarrp6hRzADeD6Z_AcY5MSwTqTUo23n2",
    ),
    (
        "provider",
        "sentry user auth token "
        "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",
    ),
    ("provider", "Grafana service account token glsa_oboMvQDDDkfMaQMncJkE6xRDe4eiZhZn_f41c3b30"),
    ("provider", "Figma personal access token — figd_c6EbNohaBlwbrlzlwEGJaxGuFxIuT1Jn02vmSPh2"),
    ("provider", "Notion integration secret: secret_le18Gd6IEYXztyL1ss0qBm6DksoenKq16SmxO3yIW1Z"),
    (
        "provider",
        "age identity for decrypting the backups: "
        "AGE-SECRET-KEY-1Z6K4DW2QALJR6Q47W0QDCSYKWA7PGEE2ATP0R9NLLGUETJP2KR5KAEGWP0",
    ),
    (
        "provider",
        "OpenAI key for the side project: "
        "sk-proj-yVJnaZ54dskwBFbPxWQldPl1iZIPydTCEKnmIgDuT3BlbkFJKFARz__Jb2EkwkMDq8L7"
        "Y9565GOkdv_rGSvj2bif",
    ),
    (
        "provider",
        "Anthropic API key he pasted: "
        "sk-ant-api03-tQjXesWBlud2eYYZSEc1XvCagMYUYcqqS6yumJvjjJeEFa_x3g02tlvFVq5_93c"
        "F_UwPCXcLSav1cjVQLmP4tA3EeEdC7AA",
    ),
    (
        "provider",
        "GitHub fine-grained PAT "
        "github_pat_118WWULOAT7S04QJFAI678_5vofiYZnIXjl3erqUbl223r3a8nRgZGbcRPna4AvC5"
        "FECvgt2Ori8YNK3hl",
    ),
    (
        "provider",
        "AWS access key id AKIALA26KZJBQPJW5XN7, secret "
        "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, region eu-west-1",
    ),
    (
        "provider",
        "Stripe live secret key "
        "sk_live_51M9YlypLM1cVgH2Jyc2bx5fVNDt5e1eqT2617PVXy0Ts8HjvTrp8zBM4Vs197EeXZXA"
        "i0TyNVgTd9oZPcQCBtYeI53Jja",
    ),
    (
        "provider",
        "slack bot token for the standup bot: "
        "xoxb-27238513506-9112347849933-po5zgWLCj0T4ZpIKAf1tDujf",
    ),
    (
        "provider",
        "Telegram bot token from BotFather: 6522830021:AA2MSkHyBQZX5wFgDqgiBvHBsp8iLwqSfRn",
    ),
    (
        "provider",
        "HF_TOKEN=hf_cDNGNZZrDtoJ9xDtFz7e9t9I1iIWIEEHDb (write access, for pushing models)",
    ),
    ("provider", "groq key is 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"),
    ("provider", "Vault root token from the init output: hvs.BDAz6zhef0FCTvEqqs22rJKF"),
    (
        "provider",
        "Twilio API key SK089e3bdd1793d556b45b2078e3a80f1b, secret dmVzPqb1ohqi9jk22yHZlHw8",
    ),
    (
        "provider",
        "Токен Яндекс OAuth для Диска: "
        "y0_AgAAAAAxLke9gPkgTwQAQ7LG9xJjGPb5m1MYp7liBrIzbDpk42q8NFmze",
    ),
    (
        "provider",
        "API-ключ сервисного аккаунта Yandex Cloud: AQVNfPXuMX7jQLq3cR7Z9CtP4GQSaDFdmdFon-2w",
    ),
    ("provider", "Мой токен Notion ntn_Htn2iR5Q5KIjUjgLzgX3MQjRekpkGqAaERVx8EUl1FbMZN, не потеряй"),
    (
        "provider",
        "ключ от OpenAI старого формата: 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",
    ),
    (
        "provider",
        "гитхабовский токен ghp_pK14K1o2jK5hNqIcD5EJY76nRmYSyGB2rTuN, права repo и workflow",
    ),
    (
        "provider",
        "Токен бота в телеге 560955832:AAOo354xYVyZ-Ko8sVqfgU18plg8I-WzMT4 — это бот "
        "для напоминаний",
    ),
    (
        "provider",
        "гугловый ключ для карт AIzaSySFlo038ndQVcvrXpUPe-IBhAI2VokBenX, лимит 1000 "
        "запросов в день",
    ),
    ("provider", "Ключ GitLab glpat-3uIqm5TVN6bWM_kwGniq для CI раннера на работе"),
    ("provider", "Токен npm для публикации пакета: npm_Zmk4nuGknkQDc0gD6lU8EhlqV4jpOHaYLXG5"),
    (
        "provider",
        "Вебхук Slack для алертов "
        "https://hooks.slack.com/services/TUNO4P1E2/BXQ9NJ319DZ/cNLx0W3npmKv5SyJ3BDjd"
        "xXk",
    ),
    (
        "provider",
        "Ограниченный ключ Stripe rk_live_N3V4SG7fR1adnQED9zeQamFX, только чтение платежей",
    ),
    ("provider", "Секрет подписи вебхуков Stripe: whsec_1rGRI4CEOvEgmwYmISKz5vAx14HuwOYb"),
    (
        "provider",
        "Токен Sentry для загрузки sourcemaps: "
        "sntrys_eyJpYXQiOjE3MTkHDnxbf8IdpxkNd6Eychh84ENYCFwJu0TBMwRRPk0HcdgQktUz5LR5y"
        "Vfagc2_cesO6SB7aMK6fzQC7pSMTXKoyEF3puPfkxiu3LLmd+m",
    ),
    (
        "provider",
        "токен Grafana Cloud glc_aBFsBfSbDHJCc40uJSJUizCW3w53PFB1TE3r1synELAdTRkCzPcYmAJoRCf7",
    ),
    (
        "provider",
        "ключ OpenRouter — "
        "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",
    ),
    (
        "provider",
        "токен его дискорд-бота: "
        "M3k79PdMo0wvWbuDakYtrajK.gLIz0d.-FjdrYjnGbpZ10ybBlPE2DEXfKcQIV_HYA1rd5",
    ),
    (
        "provider",
        "Токен PyPI для загрузки релизов: "
        "pypi-AgEIcHlwaS5vcmc6ab4SZpIqnohtbfpxzV_8NeJGXdRy8yVCRPeUA2_VB6Q9WXM-feriHRD"
        "F5c8",
    ),
    ("provider", "Databricks токен dapi296ecb1dfc4765363501cae73fa73d22-2 для ночной ETL-джобы"),
    ("provider", "Ключ Replicate: r8_Z4UcHb1MfvxbjP100IMhfO3uz4oaXn2aoHLkD"),
    (
        "provider",
        "Сервисный токен PlanetScale pscale_tkn_n5etN1c2rd6L2rRwWEz_xMVTT7VpZUlndaRIwpRdIg6",
    ),
    ("provider", "Персональный токен Doppler = dp.pt.5v9Ps42t1zlhYsE6IsEhid7ZDAU611WsnFEAVw7Xm7z"),
    ("provider", "Ключ Mailgun для рассылки: key-7597e456d411538d66b766cf03b32b1a"),
    (
        "provider",
        "SendGrid ключ у него в проекте: "
        "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",
    ),
    (
        "provider",
        "Второй ключ Linear (для личного воркспейса) "
        "lin_api_xYoTL4VKUqN2oQpQlJAniARdCGlNwlMtvScGsmoF",
    ),
    (
        "provider",
        "Глобальный API-ключ Cloudflare 02e03221ac8a8b7c4e4cd7b0077ce0b82c84c, почта "
        "аккаунта ivan@k-studio.ru",
    ),
    ("password", "his pw for the gym portal is Lentil-Harbor-77"),
    ("password", "Pass: Quokka!2024 (for the school parent portal)"),
    ("password", "Netflix pwd = 8vKp#tr2Lm"),
    ("password", 'Mum\'s email passwd, in case she forgets again: "sunflower1961!"'),
    ("password", "He set Zaq1Xsw2!cde as the pass for the NAS admin panel"),
    ("password", "Remember the Steam password — Tr0mb0ne_Kestrel"),
    ("password", "Use 'Ravioli#Fog93' as password for the shared Dropbox folder"),
    ("password", "Router admin after the factory reset, password h7Q!wN2z"),
    ("password", "Bitwarden master password: pickle-lantern-oboe-41"),
    ("password", "Her laptop pass, just in case: M1ssy&Boots"),
    ("password", "The WiFi key is 'BananaPhone44', he said guests can ask me for it"),
    ("password", "old yahoo account, pw was ilovemycat88 — he wants to recover it"),
    ("password", "Пароль от Госуслуг: Vesna_2023!mk"),
    ("password", "пасс от стима — Kotleta777"),
    ("password", "Сохрани: парол от почты ylitka-91"),
    ("password", "Его пароль к VPN «Qw8#lamp-Ozero»"),
    ("password", "Для входа в личный кабинет МТС пароль 4rTgb!56yh"),
    ("password", "поставил пароль zvezda2209 на ноутбук дочки"),
    ("password", "ключ от вайфая на даче — sosnovybor_17"),
    ("password", "Медведь_Кефир_93 — это его пароль от Сбербанк Онлайн, просил запомнить"),
    ("password", "пароль админки сайта, Ph0enix-Zakat"),
    ("password", "Мастер-пароль в 1Password у него: Limonad#Severa8"),
    ("password", "пасс от игрового акка tankist_1985, если снова забудет"),
    ("password", "пароль для архива с документами = Arhiv!2024pdf"),
    ("login_pair", "login: j.moreno@fastmail.com / password: Cactus#Ribbon5"),
    ("login_pair", "Gmail creds -> anna.keller1987@gmail.com : Pumpkin!2021"),
    ("login_pair", "user=admin pass=Hx7!kLp2q for the Grafana on the home server"),
    ("login_pair", "Amazon account is tbrennan.uk@gmail.com, pwd tbR_0419!"),
    ("login_pair", "Netflix: mikaela.s@outlook.com pw Seashell88"),
    ("login_pair", "ssh root@192.168.1.40, the password is Kettle-Moss-12"),
    ("login_pair", "FTP for the print shop: username printshop_ftp, password Xerox#4411"),
    ("login_pair", "Her Zoom login is lena.p@acme-design.com and the password is Zoom4Lena!"),
    ("login_pair", "staging admin credentials — admin@staging.local / s3cure-Staging-88"),
    (
        "login_pair",
        "https://dkowalski:Sunrise_2291@intranet.kowalski-law.pl is how he logs into "
        "the old intranet",
    ),
    ("login_pair", "Логин: ivanova_m, пароль: Lisa2019!kot"),
    ("login_pair", "Wildberries: +7 916 482-17-33 / пароль Ryabina_05"),
    ("login_pair", "Почта sergey.kuz@yandex.ru, пароль от неё Bereza#1977"),
    ("login_pair", "Вход в 1С: пользователь Бухгалтер2, пароль 7731buh"),
    ("login_pair", "логин petrov.av пасс Qwerty!2345zx"),
    ("login_pair", "Учётка на работе: CORP\\a.smirnova — пароль Zima-Sneg-2024"),
    ("login_pair", "Госуслуги: вход по телефону 89261234567, пароль Gos_Uslugi!88"),
    ("login_pair", "аккаунт в Steam: ник darkwolf_ru, пароль volk_tambov_2002"),
    ("login_pair", "Кабинет Ростелекома — логин rt_kuznecova, пароль Ros2024tel"),
    ("login_pair", "Роутер на работе: admin / Kv4rtal_88, веб-морда на 192.168.0.1"),
    ("wifi", 'Home Wi-Fi: network "Skynet_5G", password Brisket-Otter-19'),
    ("wifi", "wifi at the cottage is LakeHouse_Guest, key: pinecone2023"),
    ("wifi", "SSID: NETGEAR47 / WPA2 key: freshzebra512"),
    ("wifi", "Office wifi — BlueSky-Staff, pass Welcome2Blue!"),
    ("wifi", "WIFI:T:WPA;S:Casa_Lopez;P:tortilla8899;;"),
    ("wifi", "Grandma's router: network TP-Link_A3F2, the key is 61854390"),
    ("wifi", "Airbnb in Lisbon: Wi-Fi MEO-7C21B0, password a4b9c2d7e1"),
    ("wifi", "Connect to 'Hendersons-Mesh' with the passphrase maple syrup waffles 9"),
    ("wifi", "Вайфай дома: сеть Keenetic-4410, пароль Gorod_Solnca1"),
    ("wifi", "Wi-Fi на работе «Office_Guest», ключ — kofe2024"),
    ("wifi", "сеть у мамы называется Rostelecom_5G_91, пароль от неё 48291573"),
    ("wifi", "Дача: точка доступа «DachaNet», пасс yablonya77"),
    ("wifi", "Вай-фай в квартире, SSID MGTS_GPON_2A4F, ключ сети UaP7tk3X"),
    ("wifi", "Подключаться к wifi Beeline_2.4 — пароль 7745lisa"),
    ("wifi", "Имя сети: Zhenya_Home; пароль: Kotiki-Spyat-5"),
    ("wifi", "WIFI:S:Kvartira_42;T:WPA;P:podezd4etazh;;"),
    ("wifi", "у соседа сеть «Sosed_Vasya», он дал ключ vasya1984, можно пользоваться"),
    ("otp", "Bank sent SMS code 482913, he pasted it so I could finish the form"),
    ("otp", "2FA code: 771 204"),
    ("otp", "verification code for the Apple ID is 538201"),
    ("otp", "One-time password from the bank: 90417733"),
    ("otp", "Backup codes for Google: 8412 5530, 2093 7781, 6624 0195"),
    ("otp", "His card PIN is 4729"),
    ("otp", "Door code for the building entrance is #7341"),
    ("otp", "SIM PUK: 58203716"),
    ("otp", "Hotel room safe combination: 0613"),
    ("otp", "Passcode on her iPhone is 190388"),
    ("otp", "Steam Guard confirmation code R7K2M, expires in a minute"),
    ("otp", "Intercom code for flat 12 is 12*4471"),
    ("otp", "Код из СМС: 3902 — просил ввести его за него"),
    ("otp", "код подтверждения 715 826"),
    ("otp", "одноразовый пароль от банка 55810327"),
    ("otp", "Пин-код от карты Тинькофф — 8316"),
    ("otp", "Код домофона 47К2281, квартира 47"),
    ("otp", "резервные коды VK: 48120937, 77390215, 10584466"),
    ("otp", "PUK-код симки МТС 39027715"),
    ("otp", "код от сейфа в кабинете — 6-2-9-1"),
    ("otp", "Код 2FA из Google Authenticator: 604 117"),
    ("otp", "Код для входа в Телеграм 29815, пришёл в приложении"),
    ("otp", "пин от телефона 2409, если заблокируется"),
    ("identity", "His social security number is 529-47-3816"),
    ("identity", "SSN: 614 22 9087 (for the tax form)"),
    ("identity", "UK National Insurance number: JT 48 29 61 B"),
    ("identity", "NI no. ZR692413C, needed for the HMRC form"),
    ("identity", "US passport number 548213976, expires 2031"),
    ("identity", "German passport no. CF4R7K2L9, issued in Munich"),
    ("identity", "Driving licence number HALLE805154JM9KT"),
    ("identity", "California driver license Y4829173, exp 08/2029"),
    ("identity", "Residence permit (Aufenthaltstitel) number: Y8R4K2T91"),
    ("identity", "Alien registration number A-219-384-765 on her green card"),
    ("identity", "Паспорт РФ: серия 45 17, номер 682913, выдан ГУ МВД по г. Москве"),
    ("identity", "паспорт 4019 553728"),
    ("identity", "СНИЛС 373-269-936 19"),
    ("identity", "мой снилс 82314626581"),
    ("identity", "ИНН физлица: 275814944790"),
    ("identity", "ИНН мой — 782971043039, для налогового вычета"),
    ("identity", "Загранпаспорт 76 4418203, действует до 2033"),
    ("identity", "Водительское удостоверение 99 12 458731"),
    ("identity", "вид на жительство: серия 83, номер 0457219"),
    ("identity", "СНИЛС жены: 578-400-710 02"),
    ("identity", "ИНН 527536126893 (личный, не ИП)"),
    ("card", "Visa 4222 6513 2526 1893 exp 09/27 cvv 418"),
    ("card", "card number 5120688961541709, expiry 11/26"),
    ("card", "Amex 3496 097625 09311, CID 7713"),
    ("card", "MasterCard: 5343-0681-7338-3524 12/28 CVC 062"),
    ("card", "Her debit card 4958 2719 2442 6860"),
    ("card", "IBAN DE71 3661 9991 7712 9878 02 (his salary account)"),
    ("card", "GB88 NWBK 3111 1683 7074 58 — the account his rent goes from"),
    ("card", "Discover 6011142481342958 exp 03/29"),
    ("card", "French account: FR57 3940 7169 0172 5905 7944 467"),
    ("card", "Dutch IBAN NL87RABO4099012170"),
    ("card", "JCB card 3552 6872 9004 5285, valid thru 07/28"),
    ("card", "Карта Мир 2200 1928 5590 7068, срок 08/27, CVC 519"),
    ("card", "номер карты Сбера 2202788141782799"),
    ("card", "Карта Тинькофф: 5533 6729 0278 4884, до 05/29"),
    ("card", "карта 4470 5455 8697 2728 на имя IVAN PETROV, 04/26, код на обороте 337"),
    ("card", "UnionPay 6266 0965 5009 0660 — карта для поездки в Китай"),
    ("card", "IBAN для перевода из Казахстана: KZ46172KZT7465708325"),
    ("card", "мой IBAN в Монобанке UA617910640000951465872192176"),
    ("card", "Номер карты мамы 2204 2333 1746 2098"),
    ("card", "ES05 2882 3336 1315 4036 8151 — счёт в Испании"),
    ("card", "карта 4604963416655115218 (19 цифр)"),
    ("card", "GE11TB7809317554592322 — его счёт в TBC"),
    (
        "other",
        "-----BEGIN OPENSSH PRIVATE "
        "KEY-----\nb3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtzc2g"
        "tZW\nwX6mRcVIpwQl2qjqDTMBlphf1VZrcriyIc4LFgTDNWRs5VJ2FV6atucF0U5nbSbyUF2Ozrj\n"
        "-----END "
        "OPENSSH PRIVATE KEY-----",
    ),
    (
        "other",
        "-----BEGIN RSA PRIVATE "
        "KEY-----\nMIIEpAIBAAKCAQEA7hR1jpYCTk+vT13Tk4YjfrIFX4VwjF3imz+4YzS6O8DpAFQ4lFF"
        "MTNp9E1HqNbYQV6X1X+Lngr/pzZoqZSJ0iHD9msRYZwAGPPBiURfi5v1P44OMlfpYoG8lsDZrvxC"
        "A4H",
    ),
    ("other", "postgres://app_user:HLc8norb69nqGL5RMZ@db.internal.lan:5432/orders"),
    ("other", "mongodb+srv://admin:hQ21vN87ysbDszwt@cluster0.x7k2p.mongodb.net/prod"),
    ("other", "REDIS_URL=redis://:ay0dtOmWmCeN5geDid3oGkSL@10.0.3.7:6379/0"),
    ("other", "DJANGO_SECRET_KEY=HXW6QWD1Nb=K$h6594UxUn2P5h9Ee1Nh#bYTO0oE!YtFRO$maP"),
    ("other", "JWT_SECRET=9db672dd39cd41e7e6ca784d300a111cca8588813094d528"),
    (
        "other",
        "Authorization: Bearer "
        "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiI4ODQyIiwicm9sZSI6ImFkbWluIiw"
        "iZXhwIjoxNzY3MjI1NjAwfQ.S57MRhLYpA1v1BIdO1WbKqOX6MGxoLObL6MuiocwKmV",
    ),
    ("other", "curl header he uses: Authorization: Basic ZGVwbG95OlF6NyFtUGFyNC1sdW5l"),
    (
        "other",
        "My seed phrase: orbit velvet canyon pledge lumber okay wrist famous sugar "
        "hollow tiger anchor",
    ),
    (
        "other",
        "Ethereum wallet private key "
        "0x372d316eee8c340884d1a3a9001f420e9f50c18ab76a740a7bf422fd5994beae",
    ),
    ("other", "AWS_SECRET_ACCESS_KEY=cAeZuQ3lp4Lu3gvu51Braa2NxQ801kFUAJl15LVS"),
    ("other", "mysql://root:Tr1ton_db@127.0.0.1:3306/shop — the prod connection string"),
    (
        "other",
        "Сид-фраза от кошелька: ribbon garden shadow elbow marble cousin dignity "
        "frozen lottery puzzle nephew salad",
    ),
    ("other", "строка подключения: Server=sql01;Database=Crm;User Id=sa;Password=Mssql!Vesna24;"),
    (
        "other",
        "Приватный ключ биткоин-кошелька (WIF): "
        "LFVVQdJvNbq3VjgcRfKy88m5yN7wp1vidNKeJ7hjxELZ9utuTet3",
    ),
    (
        "other",
        "в .env у него DB_PASSWORD=Pg_Sekret_2024 и SECRET_KEY=fb333db700394a428a4bfc08b7435fe0",
    ),
    (
        "other",
        "заголовок для их API: Authorization: Bearer p6KYd1QGt5dG5I8AwL8KOtIZwlXFqdhvhw9Hedns",
    ),
    (
        "other",
        "Ключ шифрования бэкапов (AES-256, hex): "
        "8e19bca4f699582c71bacb0cd1ddab5e303db4d4f7127ab1be460d786e34fffa",
    ),
    (
        "other",
        "-----BEGIN PGP PRIVATE KEY BLOCK-----\nlQOYBGX "
        "w0yGjClFjzVek2Mkj5rkTAZjY9g6YfGKPoQWoW5WjqFFn3SFEZxH7JtwREk3xldBrwRNYcAWs3T8"
        "3ybHEpyOGl/m0Q3cg3fMr7A8npNh/OMjdPx1UtkmYltU\n(это "
        "его ключ для расшифровки почты)",
    ),
    ("other", "Кодовое слово в банке — «Барбарис», его спрашивают при звонке в поддержку"),
    ("other", "amqp://rabbit:Krolik_88@mq.local:5672/ — брокер на проде"),
    (
        "other",
        "Приватный ключ Solana-кошелька: "
        "PgAda5bbjJxrmY7cVB1VHEjdR6RCtXp5bSycMLD7C8cve31XeyHiJu1Bm8tziYR8ijYuSUSVNekh"
        "hcPkbfZ4gt4y",
    ),
    (
        "other",
        "-----BEGIN EC PRIVATE KEY-----\nMHcCAQEEI "
        "LTFZb9Zzsja0sTt5Pz+zzxHlrzRV1BAqvCjIIzGI472imdRslBRIGe3EIjLAM1uyugq94lxmxjc2"
        "p6aBg0HDtqUKS4ZKLFw+jzQ0xmY2ScSy/5\n— "
        "ключ от сертификата сайта",
    ),
]

LOOK_ALIKES: list[tuple[str, str]] = [
    ("lookalike", "the LLC's EIN: 47-3829105"),
    ("lookalike", "EIN for her design studio LLC: 84-2917365"),
    (
        "lookalike",
        "Changed her Gmail password yesterday after the phishing scare; wants a "
        "reminder to turn on 2FA as well.",
    ),
    (
        "lookalike",
        "Company policy at his firm: passwords must be at least 12 characters and "
        "rotated every 90 days.",
    ),
    ("lookalike", "Uses 1Password for everything and refuses to let the browser save logins."),
    (
        "lookalike",
        "Home network is called 'Lindqvist_Mesh'; remind the babysitter that it's "
        "the one with the house emoji.",
    ),
    ("lookalike", "Amazon order #112-4839201-7755302 (the standing desk) should arrive Thursday."),
    ("lookalike", "Flight BA 2491 to Lisbon leaves at 07:45 on 14 June, seat 23F."),
    ("lookalike", "Meeting with the accountant moved to 14:30 on Tuesday."),
    ("lookalike", "Prod is currently on v2.14.3; the hotfix ships as v2.14.4 on Friday."),
    (
        "lookalike",
        "Reverted 00e35f905e46ac7e2e3059deee80709753a3856d on main because it broke "
        "the login page.",
    ),
    ("lookalike", "Book club pick this month is The Great Gatsby, ISBN 978-0-7432-7356-5."),
    ("lookalike", "Moved to Lisbon in spring, postcode 1200-195, near Príncipe Real."),
    ("lookalike", "Lives in apartment 4B; at the conference hotel he's in room 312."),
    ("lookalike", "Paid €1,240 for the bike repair, invoice INV-2024-0387."),
    ("lookalike", "The PIN pad at the pharmacy was broken, so she paid with her phone instead."),
    ("lookalike", "Reviewing PR #4821 tomorrow — it touches the password reset flow."),
    (
        "lookalike",
        "DHL parcel id 8668505852991249 — not a card, just the tracking number for the rug.",
    ),
    ("lookalike", "SKU WH-1000XM5-BLK is the headphones model he wants for his birthday."),
    (
        "lookalike",
        "Bought a Windows 11 Pro licence; the product key is on the sticker in the "
        "box, not written down anywhere.",
    ),
    ("lookalike", "Brand colours for her studio: #2E7D32 with #FFC107 as the accent."),
    (
        "lookalike",
        "The README uses sk-... as a placeholder; tell him to replace <your key "
        "here> with his own before running.",
    ),
    ("lookalike", "Born in 1987, graduated in 2009, moved to Berlin in 2015."),
    ("lookalike", "Helping her daughter with algebra tonight: 3x + 7 = 22, so x = 5."),
    ("lookalike", "Loves the Najdorf: 1.e4 c5 2.Nf3 d6 3.d4 cxd4 4.Nxd4 Nf6 5.Nc3 a6."),
    ("lookalike", "Dentist's phone number: +44 20 7946 0321, ask for Dr Patel."),
    (
        "lookalike",
        "The open dataset she cites has the public Zenodo id 3f5fc1b5-7fea-406b-94f6-107aaecb6ae1.",
    ),
    (
        "lookalike",
        "Her password manager generates 20-character passphrases and she never reuses them.",
    ),
    ("lookalike", "Needs to reset the router password — the sticker on the back has worn off."),
    ("lookalike", "Support ticket #SR-558213 with the ISP about the slow internet is still open."),
    ("lookalike", "Volunteers as a code of conduct contact at PyCon and takes it very seriously."),
    ("lookalike", "The door code at the office changes monthly; reception emails it on the first."),
    (
        "lookalike",
        "The bank still sends SMS verification codes to her old number; she needs to "
        "update it at the branch.",
    ),
    ("lookalike", "Prefers the card ending in 4412 for travel because it has no FX fees."),
    ("lookalike", "Keeps API keys in AWS Secrets Manager and never pastes them into chat."),
    (
        "lookalike",
        "Set OPENAI_API_KEY in the environment before running the script; the value "
        "lives in the team vault.",
    ),
    (
        "lookalike",
        "The AWS docs example uses AKIAIOSFODNN7EXAMPLE as the access key id — he "
        "copied it into his slides.",
    ),
    (
        "lookalike",
        "Passport renewal appointment on 3 March at 09:20; bring two photos and the old passport.",
    ),
    (
        "lookalike",
        "Wrote his seed phrase on paper and keeps it in a safe; asked me never to ask for it.",
    ),
    (
        "lookalike",
        "Runs Postgres 16.2 locally on port 5432; the dev database is called recipes_dev.",
    ),
    ("lookalike", "UPS tracking number 1Z999AA10123456784 for the replacement charger."),
    (
        "lookalike",
        "Explained to the interns that a JWT is header.payload.signature, base64url-encoded.",
    ),
    (
        "lookalike",
        "Her public SSH key, fine to share: ssh-ed25519 "
        "AAAAC3NzaC1lZDI1NTE5AAAAIK3mPq7rTz2VxYb9LcN4wHs8JfE1uQdA6gRkM0oWnXyQ "
        "anna@thinkpad",
    ),
    ("lookalike", "Wired the sensor to pin 7 on the Arduino and the LED to pin 13."),
    ("lookalike", "Забыла пароль от почты, надо восстановить через телефон."),
    ("lookalike", "Пин-код от карты забыл, в субботу пойдёт в отделение перевыпускать."),
    ("lookalike", "Заказ № 48213-55 с Озона приедет в пункт выдачи в среду."),
    ("lookalike", "Созвон с командой в 9:00 по Москве, а по пятницам в 11:30."),
    ("lookalike", "Рейс SU 2324 Москва — Тбилиси, вылет в 06:50 из терминала B."),
    ("lookalike", "Живёт в кв. 117, подъезд 3, этаж 9, лифт часто не работает."),
    ("lookalike", "Телефон сестры для связи: +7 912 345-67-08, звонить после шести."),
    ("lookalike", "Индекс 190031, Санкт-Петербург, ул. Садовая — туда слать открытки."),
    ("lookalike", "Пароли хранит в KeePassXC, база лежит на флешке в ящике стола."),
    ("lookalike", "По правилам компании пароль должен быть не короче 10 символов и с цифрой."),
    ("lookalike", "Сеть у неё дома называется Rostelecom_8A21, но пароль она мне не давала."),
    ("lookalike", "Поменял пароль от Госуслуг после утечки, новый никому не говорит."),
    ("lookalike", "Трек-номер посылки RA644000001RU, Почта России, идёт из Казани."),
    ("lookalike", "Интернет стоит 1 250 ₽ в месяц, договор № 7701-33918."),
    ("lookalike", "У неё стоит версия приложения 3.8.1, сборка 4127, баг воспроизводится."),
    ("lookalike", "Коммит a3f9c21 сломал сборку, откатили в понедельник."),
    ("lookalike", "Задача в Jira BACK-2291 — про форму сброса пароля, он её ведёт."),
    ("lookalike", "Любимый цвет для интерфейса — #7B1FA2, фон #FAFAFA."),
    ("lookalike", "Родилась 12.04.1991, свадьба была в 2016-м."),
    ("lookalike", "Открывает ИП с ОКВЭД 62.01 — разработка программного обеспечения."),
    ("lookalike", "Номер 0753434867896558 — это не карта, а идентификатор отправления СДЭК."),
    ("lookalike", "Пицца на 4 персоны за 2 190 ₽, доставка к 19:45."),
    ("lookalike", "В шахматах играет Каро-Канн: 1.e4 c6 2.d4 d5, любит блиц 3+2."),
    ("lookalike", "Домофон в подъезде сломан, код не работает уже неделю."),
    ("lookalike", "Смс с кодом подтверждения не приходит, надо позвонить в банк."),
    ("lookalike", "Карта заканчивается на 7790 — с неё удобнее платить за такси."),
    ("lookalike", "Пылесос, который она хочет, на Wildberries под артикулом 148839201."),
    ("lookalike", "СНИЛС получила в МФЦ, в Госуслугах номер подтянулся сам."),
    ("lookalike", "Загранпаспорт надо продлить до июля, записалась на 15:20 в четверг."),
    ("lookalike", "В примере из документации вместо ключа стоит sk-xxxx, подставь свой."),
    ("lookalike", "Раньше ставила везде один и тот же пароль, теперь завела менеджер паролей."),
    ("lookalike", "Работает в офисе на Кутузовском, комната 514, пропуск на ресепшене."),
    ("lookalike", "Ключ от квартиры оставила у соседки из 42-й, пока сама в командировке."),
    ("lookalike", "Проверить у сына задачу по математике: 17 × 24 = 408."),
    ("lookalike", "Двухфакторку включила везде, коды приходят в Google Authenticator."),
    ("lookalike", "Билет в театр: ряд 7, место 14, начало в 19:00."),
    ("lookalike", "Бронь в отеле № 58213477, заезд 2 августа, выезд 9-го."),
    ("lookalike", "Пароль от вайфая в кафе она всегда забывает и спрашивает у бармена."),
    ("lookalike", "Инвентарный номер рабочего ноутбука ИТ-00482, выдан в марте."),
    ("lookalike", "Купила лицензию Windows, ключ продукта на коробке, переписать не успела."),
    (
        "lookalike",
        "Бонусная карта «Пятёрочки» с номером 1666 4866 1424 4478 — это не "
        "банковская карта, а скидочная.",
    ),
    (
        "lookalike",
        "Вместо токена в конфиге пока заглушка <ВАШ_ТОКЕН>, настоящий выдадут в понедельник.",
    ),
    ("lookalike", "Пин-падом в магазине пользоваться не любит, всегда платит телефоном."),
    ("lookalike", "needs to reset his password for the bank app, forgot it again"),
    ("lookalike", "keeps the PIN on a sticky note on the fridge, which worries her husband"),
    ("lookalike", "uses Bitwarden for all passwords, shares a family vault with his wife"),
    ("lookalike", "company policy: passwords at least 14 characters, rotated every 90 days"),
    ("lookalike", "home wifi network is called 'PrettyFlyForAWiFi'"),
    ("lookalike", "UPS tracking 1Z4F87W20391846572 — that's the new monitor"),
    ("lookalike", "flight TP 1347 Lisbon→Porto on 14 March, boarding 07:45"),
    ("lookalike", "mobile: +351 912 483 076, prefers whatsapp"),
    ("lookalike", "lives at 27 Rua da Rosa, 3rd floor, flat 3B, 1200-385 Lisboa"),
    ("lookalike", "order #A-1029384 from IKEA arrives Tuesday"),
    ("lookalike", "booking reference QX7R2L for the hotel in Porto"),
    ("lookalike", "invoice INV-2024-00318 is overdue, client promised Friday"),
    ("lookalike", "running Django 5.0.6 on Python 3.12.3, postgres 16"),
    (
        "lookalike",
        "merged PR #4821; commit 9f3c2a7e1b4d8f60a5c2e9b3d7f1a0c4e6b8d2f1 broke CI on main",
    ),
    ("lookalike", "macOS build 24F74 crashes his Xcode on launch"),
    ("lookalike", "the site throws HTTP 502 after every deploy"),
    ("lookalike", "has a ThinkPad X1 Carbon Gen 11 with 32GB RAM"),
    ("lookalike", "wants the iPhone 15 Pro Max 256GB in natural titanium"),
    ("lookalike", "IKEA article 402.998.57 is the shelf he liked (KALLAX, white)"),
    ("lookalike", "car plate 52-XR-91, grey Golf"),
    ("lookalike", "played her lottery numbers 4 11 19 23 38 45 again, no luck"),
    ("lookalike", "Benfica won 3–1 last night, he was thrilled"),
    ("lookalike", "pancake recipe: 200 g flour, 2 eggs, 300 ml milk, 1 tbsp sugar, pinch of salt"),
    ("lookalike", "loves the Najdorf: 1.e4 c5 2.Nf3 d6 3.d4 cxd4 4.Nxd4 Nf6 5.Nc3 a6"),
    ("lookalike", "hotel room 1412, checkout at 11:00"),
    ("lookalike", "placeholder in his README: OPENAI_API_KEY=sk-xxxxxxxxxxxxxxxx"),
    (
        "lookalike",
        "docs tell you to send `Authorization: Bearer <token>`; he hasn't created a token yet",
    ),
    (
        "lookalike",
        "his tutorial notes use the AWS docs example key AKIAIOSFODNN7EXAMPLE / "
        "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
    ),
    ("lookalike", "card ending in 4821 got declined at the pharmacy"),
    ("lookalike", "Visa **** **** **** 7702 is the one for subscriptions"),
    ("lookalike", "Pingo Doce loyalty card 7894717378774133"),
    ("lookalike", "reading ISBN 978-0-14-120717-9, the Penguin Classics edition"),
    ("lookalike", "cites doi:10.1016/j.jss.2023.111842 in his thesis"),
    ("lookalike", "brand colours are #1E6FD9 and #F4B400"),
    ("lookalike", "favourite viewpoint at 38.7139, -9.1394"),
    (
        "lookalike",
        "his PUBLIC ssh key for the server: ssh-ed25519 "
        "AAAAC3NzaC1lZDI1NTE5AAAAIEzojr25Vte8bu2Hx1iH4LVEsYrNA/J27CYvhebYYq61 "
        "mark@thinkpad",
    ),
    (
        "lookalike",
        "public BTC donation address on his blog: bc1qflgjglhm0vuxsn4sckqmwhphjayhh5ujxf54e7n",
    ),
    ("lookalike", "2FA is on for everything, he uses Authy"),
    ("lookalike", "SMS codes from his bank arrive really late, annoying"),
    ("lookalike", "the password for the shared drive is with the IT guy, not with him"),
    ("lookalike", "office postcode EC1V 9HX"),
    ("lookalike", "meeting moved to 15:30 on 2024-06-18"),
    ("lookalike", "ran a 10k in 52:14 on Sunday"),
    ("lookalike", "rent is €1,250 a month, due on the 5th"),
    ("lookalike", "in tests he uses Stripe's documented test card 4242 4242 4242 4242"),
    ("lookalike", "lost his social security card, booked an appointment to get a replacement"),
    ("lookalike", "passport expires in May 2027, wants to renew before the Japan trip"),
    ("lookalike", "train ICE 578 from Frankfurt at 09:12, coach 7 seat 45"),
    ("lookalike", "can recite pi to 20 places: 3.14159265358979323846"),
    ("lookalike", "the wifi password is printed on the back of the router"),
    (
        "lookalike",
        "learning hashing: sha256 of an empty string is "
        "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
    ),
    ("lookalike", "public dataset id 12e9d0ef-c00e-4dbd-87b8-1fd162d2307c on the open data portal"),
    ("lookalike", "the API key goes in the X-Api-Key header, he keeps it in 1Password"),
    ("lookalike", "пароль от почты у жены, сам не помнит"),
    ("lookalike", "код от домофона знает соседка из 12-й квартиры"),
    ("lookalike", "хочет сменить пароль от госуслуг, старый вроде утёк"),
    ("lookalike", "домашняя сеть называется Keenetic-Ultra"),
    ("lookalike", "трек-номер посылки RA482913576RU, идёт из Китая"),
    ("lookalike", "рейс SU 1702 Москва — Калининград, вылет 06:40"),
    ("lookalike", "поезд 016А «Арктика», вагон 5, место 23"),
    ("lookalike", "телефон +7 (916) 482-03-17, лучше писать в телегу"),
    ("lookalike", "живёт: ул. Профсоюзная, д. 104, кв. 58, подъезд 3, этаж 9"),
    ("lookalike", "почтовый индекс 117485"),
    ("lookalike", "номер заказа на Озоне 48213907-0035, пункт выдачи у дома"),
    ("lookalike", "ошибка 0x80070005 при обновлении винды"),
    ("lookalike", "госномер машины Е742КМ 197, белая веста"),
    ("lookalike", "Спартак — Зенит 2:1, он болел за Спартак"),
    ("lookalike", "рецепт борща: 500 г говядины, 3 картофелины, 1 свёкла, 2 ст. л. томатной пасты"),
    ("lookalike", "карта заканчивается на 0934"),
    ("lookalike", "в выписке номер карты замаскирован: 2200 **** **** 5612"),
    ("lookalike", "бонусная карта Пятёрочки 9565119215440984"),
    ("lookalike", "в шаблоне конфига стоит API_KEY=ВАШ_КЛЮЧ, настоящий ключ ещё не получил"),
    ("lookalike", "пользуется KeePassXC, база лежит на флешке"),
    ("lookalike", "пин-код от карты записан в блокноте у мамы"),
    ("lookalike", "версия приложения 3.14.2 (сборка 5821)"),
    ("lookalike", "ноутбук Lenovo IdeaPad 5 14ALC05, хочет апгрейд SSD"),
    ("lookalike", "артикул на WB 143829571 — кроссовки, 42 размер"),
    ("lookalike", "день рождения 12 марта, любит пионы"),
    ("lookalike", "встреча в 19:00 у метро Чистые пруды"),
    ("lookalike", "ИНН организации нужен для счёта, попросит у бухгалтера"),
    ("lookalike", "паспорт менять в 45 лет, осталось два года"),
    ("lookalike", "СНИЛС лежит в синей папке с документами"),
    ("lookalike", "портал требует пароль не короче 8 символов, с цифрой и заглавной"),
    ("lookalike", "живёт в общежитии, комната 314"),
    (
        "lookalike",
        "открытый ключ PGP выложен на keys.openpgp.org, отпечаток CCA0 314A 7970 "
        "1E3A A196 BF44 3FE0 0C8E 1824 CA83",
    ),
    (
        "lookalike",
        "публичный адрес кошелька для донатов (не приватный!): "
        "0x5eb029abc4e69625e4450238a4d067c162b96771",
    ),
    ("lookalike", "коммит a1b2c3d в ветке feature/notes, ревью в PR #312"),
    ("lookalike", "HTTP 403 при загрузке файлов в S3, разбирается с политиками"),
    ("lookalike", "лотерея: ставит 3, 7, 15, 22, 31, 40 каждую неделю"),
    ("lookalike", "шахматы: играет Каро-Канн, 1.e4 c6 2.d4 d5 3.Nc3 dxe4"),
    ("lookalike", "дочке помогал с задачей: 2^10 = 1024, 3^7 = 2187"),
    ("lookalike", "координаты дачи 55.9142, 37.8451"),
    ("lookalike", "цвет темы #2D2D2D, акцент #FFB300"),
    ("lookalike", "читает книгу ISBN 978-5-903997-56-5"),
    ("lookalike", "DOI статьи научрука 10.31857/S0032180X23010045"),
    (
        "lookalike",
        "открытый датасет на data.mos.ru, идентификатор ae367b3b-737e-4a84-9e7d-6dd5dcd3d53e",
    ),
    ("lookalike", "стиралка Bosch выдаёт ошибку E18, вызвал мастера"),
    ("lookalike", "смс с кодом не приходит, оператор Tele2"),
    ("lookalike", "двухфакторка включена через Яндекс Ключ"),
    ("lookalike", "токен для бота ещё не выпустил, BotFather пока не отвечает"),
    ("lookalike", "цена 3 490 ₽, скидка 15% до воскресенья"),
    ("lookalike", "пробежал полумарафон за 1:58:33"),
    ("lookalike", "iPhone 13 mini, iOS 17.5.1"),
    ("lookalike", "счёт-фактура № 000318 от 14.05.2024"),
    ("lookalike", "номер брони в гостинице 7XK42Q, заезд 20 июля"),
    ("lookalike", "в доке пример токена выглядит как <ВСТАВЬ_ТОКЕН>, он так и вставил сначала"),
    ("lookalike", "ключ от квартиры оставил под ковриком, смеётся что это его «пароль»"),
    ("lookalike", "забыл пин от телефона, пришлось сбрасывать до заводских"),
    ("lookalike", "ИНН его ООО — 7743162692"),
    ("lookalike", "She forgot her email password again, reset link was sent to her phone"),
    (
        "lookalike",
        "password rules at work: min 12 chars, one digit, one symbol, change every 90 days",
    ),
    ("lookalike", "Home wifi is called NETGEAR-Home-5G, the password is on the router sticker"),
    ("lookalike", "Amazon order #114-3928475-2210938 arrives Thursday"),
    ("lookalike", "UPS tracking number 1Z4F82W90312847765, signature required"),
    ("lookalike", "Flight booking ref QX7T2M, LHR -> LIS on 14 May, seat 23C"),
    ("lookalike", "call the plumber at +44 7700 900123 after 6pm"),
    ("lookalike", "address: 221 Maple Street, Apt 4B, Portland OR 97205"),
    ("lookalike", "invoice INV-2024-0871 for $1,240.00 is due on March 31"),
    ("lookalike", "upgraded postgres 15.4 -> 16.2, build 8812 passed"),
    ("lookalike", "error 0x80070005 when installing windows update KB5034441"),
    ("lookalike", "fixed in commit dc945877b979b978995a1bdaa2ca9b52cb0ca97d, PR #482 merged"),
    ("lookalike", "Set OPENAI_API_KEY=sk-xxxx in your .env, everyone uses their own key"),
    ("lookalike", "the token goes in the header as Authorization: Bearer <token>"),
    (
        "lookalike",
        "My public SSH key (fine to share): ssh-ed25519 "
        "AAAAC3NzaC1lZDI1NTE5AAAAIID87d1/1+5cgkjafABZtijh+HyS1ETWJ0IPSsTn6Cck "
        "dan@laptop",
    ),
    (
        "lookalike",
        "send the tip to my public ETH address 0xaa7096d8e243e306c8ed80dbe8a12a9784fb2ee5",
    ),
    ("lookalike", "card ending in 4417 was charged twice by the gym"),
    ("lookalike", "Visa **** **** **** 8821 expires next month, need to update netflix"),
    ("lookalike", "pet store loyalty card number 7868 9099 0450 8549"),
    ("lookalike", "parcel id 9145123076805732 stuck in customs since monday"),
    ("lookalike", "ISBN 978-5-15-575371-1 - the book for the reading club"),
    (
        "lookalike",
        "the event UUID b8c6e892-7fbd-42ae-9b2c-1d44fe80c892 is in the public calendar link",
    ),
    ("lookalike", "brand colour #1E90FF, secondary #F4A261"),
    ("lookalike", "we camped at 46.5521 N, 7.9856 E, amazing view 🏔️"),
    ("lookalike", "Supplier's company VAT ID DE284716392, it's printed on their website"),
    ("lookalike", "score was 3-1, Leo scored twice ⚽"),
    ("lookalike", "pancakes: 2 cups flour, 1.5 cups milk, 2 eggs, 1 tbsp sugar, pan at 180C"),
    ("lookalike", "licence plate of the rental car: KP21 XZT"),
    ("lookalike", "she uses a password manager (Bitwarden) and 2FA on everything now"),
    ("lookalike", "got the 2FA code but it expired before I typed it in"),
    ("lookalike", "SKU BR-4421-BLK-M, 12 left in stock"),
    ("lookalike", "Router model TP-Link Archer AX55, firmware 1.1.3 Build 20231012"),
    ("lookalike", "ticket #SUP-20931: user cannot reset PIN, escalated to tier 2"),
    ("lookalike", "Meeting at 14:30 on 2025-06-03, room 4.12"),
    ("lookalike", "the train leaves platform 9 at 07:45, coach 12 seat 64"),
    ("lookalike", "he has to change his password every month and hates it"),
    ("lookalike", "API keys should live in env vars or a vault, never in the repo"),
    ("lookalike", "Rank 2 in the tournament with 4820 MMR, gg ez"),
    ("lookalike", "the PIN must be 4 to 6 digits and not your birth year"),
    ("lookalike", "dentist phone: (503) 555-0148"),
    ("lookalike", "Python 3.12.1, Django 5.0.4, node v20.11.0"),
    (
        "lookalike",
        "our Mapbox public token is in the frontend bundle, that's expected: "
        "pk.eyJ1IjoiYmFrZXJ5LW1hcCIsImEiOiJWGs29dP9CBlByJlU7wCB6aJNIn0.thOuvIr9V6UzUF"
        "4rJFYj-w",
    ),
    ("lookalike", "BTC donation address (public, on the site): 1E8upck3BcnwNT9Ms2YSaTf8frXGKhPrRk"),
    ("lookalike", "fridge model RB38T602CS9, warranty until 12/26"),
    ("lookalike", "our wifi name is 'FBI Surveillance Van 3' lol"),
    ("lookalike", "gate opens with the app now, no code needed anymore"),
    ("lookalike", "version 2.14.0-rc.3 rolled back because of error 503"),
    ("lookalike", "Passport renewal appointment on 12 April at 9:20, bring 2 photos"),
    ("lookalike", "DHL parcel id 4008178541109195, out for delivery"),
    ("lookalike", "gym member ID on the loyalty card: 4365 4059 2061 2942"),
    ("lookalike", "kid's school locker is number 214, the blue lock"),
    ("lookalike", "two-factor is on for her Apple ID now, codes go to her phone"),
    (
        "lookalike",
        "sha256 of the release tarball is published on the download page, verify before installing",
    ),
    ("lookalike", "Steam sale: Elden Ring for $35.99, wishlist has 47 games"),
    ("lookalike", "бабушка опять забыла пароль от госуслуг, восстановили через МФЦ"),
    ("lookalike", "требования к паролю: не меньше 8 символов, заглавная буква и цифра"),
    ("lookalike", "вайфай на даче называется Rostelecom_DACHA, пароль спросить у соседа"),
    ("lookalike", "заказ на озоне № 48213977-0041, доставка в пятницу"),
    ("lookalike", "трек-номер Почты России RB417392856RU"),
    ("lookalike", "бронь в отеле 7719-2284, заезд 12.07 после 14:00"),
    ("lookalike", "телефон мастера по стиралкам +7 (912) 448-21-09"),
    ("lookalike", "адрес: г. Казань, ул. Баумана, д. 19, кв. 42"),
    ("lookalike", "счёт № 318 от 15.03.2025 на 48 500 ₽, оплатить до конца месяца"),
    ("lookalike", "ИНН нашей компании ООО «Ромашка» 7721928951, КПП 772101001"),
    ("lookalike", "ИНН организации-поставщика 5489305444, указать в договоре"),
    ("lookalike", "код ошибки 0xc000007b при запуске игры, переустановил DirectX"),
    ("lookalike", "Билет на поезд 072Ч, вагон 9, место 34, отправление 23:55"),
    ("lookalike", "версия 1С:Бухгалтерия 3.0.158.22, платформа 8.3.24"),
    ("lookalike", "номер карты лояльности Пятёрочки 7163 0638 1638 6093"),
    ("lookalike", "карта заканчивается на 3371, ей и платить за садик"),
    ("lookalike", "карта **** 5521 — зарплатная, не блокировать"),
    ("lookalike", "вставь свой токен вместо ВАШ_ТОКЕН в config.py бота"),
    ("lookalike", "ключ api не храни в коде, клади в переменную окружения"),
    ("lookalike", "код подтверждения не пришёл, попросила отправить ещё раз"),
    ("lookalike", "пин-код от карты сменила в банкомате, теперь запомнила"),
    ("lookalike", "госномер машины Х482КМ 196, серебристая гранта"),
    ("lookalike", "рецепт: 500 г муки, 300 мл молока, 2 яйца, 180 градусов 40 минут"),
    ("lookalike", "счёт матча 2:2, по пенальти 4:3, мы прошли!"),
    ("lookalike", "коммит d9bc536 сломал сборку, PR #1290 его откатил"),
    ("lookalike", "ошибка 404 на странице оплаты, сборка 3471"),
    ("lookalike", "домофон сломан, код не нужен, дверь открыта"),
    ("lookalike", "координаты места для рыбалки 56.8389, 60.6057"),
    (
        "lookalike",
        "публичный ключ для ssh (можно раздавать): ssh-ed25519 "
        "AAAAC3NzaC1lZDI1NTE5AAAAIID87d1/1+5cgkjafABZtijh+HyS1ETWJ0IPSsTn6Cck "
        "ivan@work",
    ),
    (
        "lookalike",
        "адрес кошелька для пожертвований (публичный): 0xb6065c79e6e81097718676446a2f517f1a2b6865",
    ),
    ("lookalike", "цвет логотипа #E63946, фон #F1FAEE"),
    ("lookalike", "ISBN 978-5-6219-3723-2 — учебник для Маши"),
    ("lookalike", "модель холодильника Атлант ХМ-4624-101"),
    ("lookalike", "артикул на WB 184729361, размер 46"),
    ("lookalike", "парольная политика: менять раз в 60 дней, нельзя повторять 5 последних"),
    ("lookalike", "vaifai nazyvaetsya Keenetic-Home, parol na nakleyke snizu"),
    ("lookalike", "Посылка СДЭК № 1564829307, пункт выдачи на Ленина"),
    ("lookalike", "паспорт менять в 45 лет, записалась на 3 июня"),
    ("lookalike", "СНИЛС надо принести на работу копией, напомнить в пн"),
    ("lookalike", "день рождения внука 14.05.2019, купить подарок"),
    ("lookalike", "цена 12 990 ₽ со скидкой, было 15 490"),
    ("lookalike", "приём у врача в 10:40, кабинет 215"),
    ("lookalike", "номер заявки в техподдержку #SD-48291, статус «в работе»"),
    ("lookalike", "токен генерится в личном кабинете, раздел Настройки → API"),
    ("lookalike", "UUID заказа из публичной ссылки 84dd4c20-4ca5-4a97-9114-bf2b5ab85f2d"),
    ("lookalike", "ip сервера 192.168.1.20, порт 8080, заходим только по ключу"),
    ("lookalike", "вайфай в кафе без пароля, сеть Coffee_Free"),
    ("lookalike", "номер накладной Деловых линий 9656005716135856"),
    ("lookalike", "пароль был из 12 символов, она записала его в блокнот"),
    ("lookalike", "телефон банка 900, звонить только туда, если что"),
    ("lookalike", "ключи от квартиры у соседки из 15-й квартиры"),
    ("lookalike", "пример формата: sk-ant-... это ключ Anthropic, свой сюда не присылай"),
    ("lookalike", "ИНН работодателя ООО «УралСтрой» 6625990176 — для справки 2-НДФЛ"),
    ("lookalike", "parol ot wifi pomenyali, novyi skazhut zavtra"),
    ("lookalike", "Changed her email password last week after a phishing scare."),
    ("lookalike", "Forgot his Netflix password again and reset it by email."),
    ("lookalike", "Uses a password manager (Bitwarden) for everything."),
    ("lookalike", "Work requires passwords of at least 14 characters with one symbol."),
    ("lookalike", "Home Wi-Fi network is called 'Lisbon_Loft_5G'."),
    ("lookalike", "Amazon order #114-7782913-5520468 should arrive Friday."),
    ("lookalike", "UPS tracking number 1Z4F8W2903881720 for the parcel from Berlin."),
    ("lookalike", "Flight booking reference is QX7P2L, seat 14C."),
    ("lookalike", "Invoice INV-2024-0917 is due on 30 November."),
    ("lookalike", "Support ticket #58213 with the ISP is still open."),
    ("lookalike", "Phone number of her dentist: +351 21 846 2290."),
    ("lookalike", "Lives at 221 Maple Street, apartment 4B."),
    ("lookalike", "birthday is 14 March, likes chocolate cake"),
    ("lookalike", "Meeting moved to 15:30 on Thursday."),
    ("lookalike", "Paid $1,249.99 for the new laptop."),
    ("lookalike", "Runs Python 3.12.4 and Django 5.0.6 on the project."),
    ("lookalike", "Windows update fails with error code 0x80070005."),
    ("lookalike", "Fixed the login bug in commit f32ec37, PR #482 merged."),
    ("lookalike", "Has a Samsung Galaxy S23 Ultra (SM-S918B)."),
    ("lookalike", "Car plate is AX-34-KL, a blue Fiat Panda."),
    ("lookalike", "Their team won 3-1 on Sunday."),
    ("lookalike", "Bread recipe: 500 g flour, 350 ml water, 10 g salt."),
    ("lookalike", "In docs he writes the key as sk-xxxx...xxxx, never the real one."),
    ("lookalike", "The config template uses API_KEY=<your-token-here>."),
    ("lookalike", "The card ending in **** 4821 is the one she uses for groceries."),
    ("lookalike", "Supermarket loyalty card number 6873 2303 9931 4204."),
    ("lookalike", "Currently reading ISBN 978-0-14-143951-8 (Pride and Prejudice)."),
    ("lookalike", "Public dataset id is 6188a776-61a5-4e61-a2b3-8082cee153e1."),
    ("lookalike", "Favourite colour for the site theme is #3A7FC4."),
    ("lookalike", "The cabin is at 38.7223 N, 9.1393 W."),
    ("lookalike", "His company's VAT number is PT 509 442 013, it's printed on every invoice."),
    ("lookalike", "Two-factor authentication is enabled on all his accounts."),
    ("lookalike", "Wants to set up 2FA with an authenticator app instead of SMS."),
    ("lookalike", "Got locked out after entering the wrong PIN three times."),
    ("lookalike", "The SSN field on the form is optional, he left it blank."),
    ("lookalike", "Passport expires in June 2027; needs to renew before the trip."),
    ("lookalike", "Prefers passphrases of four random words over short passwords."),
    ("lookalike", "The office gate opens automatically 8:00-19:00."),
    ("lookalike", "At work they rotate API keys every 90 days."),
    ("lookalike", "DHL parcel ID 1835 6943 9320 8858, due Tuesday."),
    ("lookalike", "Room 1204 at the Hilton, check-in at 3 pm."),
    ("lookalike", "Ran 10.5 km in 52:14 this morning."),
    ("lookalike", "Gets a 404 from the /api/v2/users endpoint after deploy."),
    ("lookalike", "Mentioned that classic GitHub tokens start with ghp_ as trivia."),
    ("lookalike", "zip code 94110, san francisco"),
    ("lookalike", "Her Wi-Fi password is on a sticker under the router, she never remembers it."),
    ("lookalike", "Version 2.4.1 of the app broke dark mode."),
    ("lookalike", "Bought a YubiKey 5C NFC for two-factor logins."),
    ("lookalike", "Commit 9c1e4ab reverted the auth middleware change."),
    ("lookalike", "Uses the placeholder YOUR_API_KEY in the tutorial README."),
    ("lookalike", "Acme GmbH's VAT ID is DE129273398, listed publicly on their website."),
    ("lookalike", "The office wifi SSID is Acme-Staff; the password comes from IT."),
    ("lookalike", "Concert ticket: section B, row 12, seat 7."),
    ("lookalike", "The door code to the apartment changed, he'll tell the cleaner in person."),
    ("lookalike", "Сменила пароль от почты после взлома."),
    ("lookalike", "Забыл пин-код от карты, пойдёт в отделение."),
    ("lookalike", "Пароль должен содержать не менее 8 символов, заглавную букву и цифру."),
    ("lookalike", "Домашняя сеть Wi-Fi называется Keenetic-8812."),
    ("lookalike", "Номер заказа на Ozon: 48213907-0041."),
    ("lookalike", "Трек-номер посылки: 14580291736402, придёт на почту у дома."),
    ("lookalike", "Бронь в гостинице № 7729104, заезд 12 июля."),
    ("lookalike", "Счёт № 318 от 05.09.2024 на сумму 18 400 ₽."),
    ("lookalike", "Номер заявки в техподдержку Ростелекома — 1-29384711."),
    ("lookalike", "Телефон мамы: +7 912 480-33-71."),
    ("lookalike", "Живёт по адресу ул. Ленина, д. 42, кв. 17."),
    ("lookalike", "День рождения дочери 3 апреля."),
    ("lookalike", "Созвон в 19:00 по Москве."),
    ("lookalike", "Купил пылесос за 24 990 рублей."),
    ("lookalike", "Обновил PostgreSQL до версии 16.2."),
    ("lookalike", "Ошибка 0xc000007b при запуске игры."),
    ("lookalike", "В PR #1290 поправил миграции, коммит 4782deb."),
    ("lookalike", "Телефон — Xiaomi Redmi Note 12 Pro, модель 22101316G."),
    ("lookalike", "Госномер машины — Т482КМ 199."),
    ("lookalike", "Счёт матча 2:1 в пользу «Зенита»."),
    ("lookalike", "Рецепт блинов: 2 яйца, 500 мл молока, 200 г муки."),
    ("lookalike", "В инструкции написано подставить ВАШ_ТОКЕН вместо реального ключа."),
    ("lookalike", "Карта **** 7712 привязана к Яндекс Go."),
    ("lookalike", "Номер карты лояльности «Пятёрочки»: 1351 2193 3471 8513."),
    ("lookalike", "ISBN книги: 978-5-17-118366-0"),
    ("lookalike", "ИНН компании «Ромашка» (публичный, есть на сайте): 3162199755."),
    ("lookalike", "ИНН работодателя — 4021815869, указан в договоре."),
    ("lookalike", "Фирменный цвет логотипа — #E30613."),
    ("lookalike", "Координаты дачи: 55.7558, 37.6173."),
    ("lookalike", "Включила двухфакторную аутентификацию в Telegram."),
    ("lookalike", "Не помнит пароль от Госуслуг, восстановит через банк."),
    ("lookalike", "СНИЛС нужно принести в отдел кадров в понедельник."),
    ("lookalike", "Паспорт надо поменять в 45 лет, это через два года."),
    ("lookalike", "Банк вернул код ошибки 05 — отказ эмитента."),
    ("lookalike", "Пароль от Wi-Fi висит на холодильнике, наизусть его не помнит."),
    ("lookalike", "Код домофона не знает, всегда звонит в квартиру 58."),
    ("lookalike", "Ключ API надо хранить в переменных окружения, а не в коде."),
    ("lookalike", "В примере используют токен вида xoxb-XXXX-XXXX."),
    ("lookalike", "Номер билета на поезд 7425108831902, вагон 9, место 23."),
    ("lookalike", "Артикул куртки на Wildberries: 163820941."),
    ("lookalike", "Версия приложения СберБанк Онлайн 15.3.0."),
    ("lookalike", "ставит будильник на 6:45"),
    ("lookalike", "Номер отправления СДЭК 1548293761."),
    ("lookalike", "Рост 178 см, вес 74 кг."),
    ("lookalike", "Рейс SU 1402, вылет в 07:35 из Шереметьево."),
    ("lookalike", "Просила напомнить продлить загранпаспорт."),
    ("lookalike", "Пин-код должен быть из 4 цифр, без повторов."),
    ("lookalike", "Размер обуви 42, одежды M."),
    ("lookalike", "Уровень в игре — 87, рейтинг 2350."),
    ("lookalike", "Почтовый индекс 620014, Екатеринбург."),
    ("lookalike", "UUID заказа в трекере: 6513270e-269e-4d37-b2a7-4de452e6b438."),
    ("lookalike", "Сменить пароль от роутера на более длинный — в планах на выходные."),
    ("lookalike", "Номер участка в СНТ — 112."),
    ("lookalike", "Получила новый токен доступа на работе, но сам токен не показывала."),
    ("lookalike", "Changed his password after the phishing email last Tuesday."),
    ("lookalike", "Anna always forgets her Netflix password and resets it by email."),
    (
        "lookalike",
        "Her passport expires in March, so she needs to renew it before the Lisbon trip.",
    ),
    ("lookalike", "The Wi-Fi password at the library is written on the board by the entrance."),
    ("lookalike", "Amtrak ticket number 3841 2290 7765 for the 8:15 Acela to Boston."),
    ("lookalike", "Order #112-4839201-7745210 from Amazon should arrive on Thursday."),
    ("lookalike", "UPS tracking number 1Z4F82W90347719263 — the parcel is stuck in Louisville."),
    ("lookalike", "The bank's fraud hotline is 1-800-555-0199, printed on the back of the card."),
    ("lookalike", "Her card ending 4417 was declined at the pharmacy."),
    ("lookalike", "The app shows his card as **** **** **** 8802."),
    ("lookalike", "Mark keeps all his API keys in 1Password now instead of a text file."),
    (
        "lookalike",
        "The tutorial says to set OPENAI_API_KEY=<your-key-here> before running the script.",
    ),
    (
        "lookalike",
        "Config template has STRIPE_SECRET_KEY=sk_live_xxxxxxxxxxxxxxxx; the real "
        "value lives in the vault.",
    ),
    ("lookalike", "Her MacBook serial number is C02XK1ABJGH5, needed for the warranty claim."),
    ("lookalike", "Windows Update fails with error 0x80070005 on Dad's PC."),
    (
        "lookalike",
        "Deployed build 4.12.0 (commit 162deb46c528369d0b1f820f347a83b051e87e7c) to staging.",
    ),
    (
        "lookalike",
        "SHA-256 of the Ubuntu ISO she downloaded: "
        "e506bda35af244003b602bc19e52eabbc453804bbf30a909bbb2756e80e39cd0, matches "
        "the website.",
    ),
    ("lookalike", "Flight BA 283 on 14 May, e-ticket 125-2412345678, seat 32A."),
    ("lookalike", "The bakery's VAT number is GB 123 4567 89, it's printed on every receipt."),
    ("lookalike", "Deutsche Bank's SWIFT code is DEUTDEFF — needed for the wire transfer form."),
    ("lookalike", "ISBN of the novel for Emma's English class: 978-0-14-303943-3."),
    ("lookalike", "The cereal barcode 5000127062283 scanned at the wrong price at checkout."),
    ("lookalike", "The car's plate is KX19 ABC and it's due for its MOT in June."),
    ("lookalike", "Meet at 51.5072, -0.1276 on Saturday at 10:30."),
    ("lookalike", "She paid $1,249.99 for the new laptop on 2024-03-15."),
    ("lookalike", "Phone number of the kids' dentist: +1 (415) 555-0132."),
    ("lookalike", "Tom never shares his PIN, not even with his wife."),
    ("lookalike", "Her SSN card got lost in the move; she requested a replacement from the SSA."),
    ("lookalike", "She left the IBAN field on the form blank because she didn't have it handy."),
    ("lookalike", "Dad asked how two-factor codes work, so I explained authenticator apps."),
    ("lookalike", "He uses a YubiKey for the work login now, no more SMS codes."),
    ("lookalike", "The landlord will email the door code for the new office on Monday."),
    ("lookalike", "IMEI of the stolen phone for the police report: 354618891240591."),
    ("lookalike", "The server runs Python 3.11.8 and Django 5.0.3."),
    ("lookalike", "Invoice INV-2024-00871 for $3,200 is two weeks overdue."),
    ("lookalike", "Her driving licence was renewed; the new card arrives in 2–3 weeks."),
    ("lookalike", "He rotated the AWS keys after a contractor left the team."),
    ("lookalike", "The token expired, so the Home Assistant integration needs to be reauthorized."),
    (
        "lookalike",
        "Donations go to her public ETH address 0x52908400098527886E0F7030069857D2E4169EE7.",
    ),
    (
        "lookalike",
        "The router's default login is on a sticker underneath; she hasn't changed it yet.",
    ),
    ("lookalike", "Router model WRT3200ACM, firmware version 1.0.6.186168."),
    ("lookalike", "Zoom meeting ID 843 2291 7764 for the parent-teacher call on Wednesday."),
    ("lookalike", "Seat 14C, gate B22, boarding at 06:40."),
    ("lookalike", "Routing number 021000021 for Chase is listed on their website."),
    ("lookalike", "Insurance claim reference CLM-88213-B for the dented bumper."),
    (
        "lookalike",
        "The letter with her NHS number came in the post; she filed it in the blue folder.",
    ),
    ("lookalike", "He uses the passphrase generator in Bitwarden and never reuses passwords."),
    ("lookalike", "Error E-0417 on the dishwasher means the drain is blocked."),
    ("lookalike", "Version 2.3.1-beta of the app broke the login screen."),
    ("lookalike", "The ticket for the broken printer is HELP-4821 in Jira."),
    (
        "lookalike",
        "The example in the docs is ghp_XXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXX, not a real token.",
    ),
    ("lookalike", "Grandma's Wi-Fi is called Sokolov Family, but she doesn't know the password."),
    ("lookalike", "The office Wi-Fi SSID is Northwind-Guest; the password changes every Monday."),
    ("lookalike", "Jake's username on the forum is jmiller84, but he signs in with Google."),
    ("lookalike", "The OTP never arrived, so Anna asked the bank to resend it."),
    ("lookalike", "Her gym locker is number 118; she brings her own padlock."),
    (
        "lookalike",
        "Job 3f2b9c1e-7a4d-4e8b-9c0f-1d2e3a4b5c6d failed overnight, the id went to support.",
    ),
    ("lookalike", "Card expiry is 09/27 and she wants a reminder in August to order a new one."),
    (
        "lookalike",
        "I explained to Grandpa that the CVV is the three digits on the back of the card.",
    ),
    ("lookalike", "Hamilton tickets: order 80-41729, row K, seats 112 and 113."),
    ("lookalike", "Her private key for code signing lives on a hardware token, never on disk."),
    (
        "lookalike",
        "Password: ******** is all the old email shows, so he can't recover it from there.",
    ),
    ("lookalike", "Пароль от вайфая спросить у администратора."),
    ("lookalike", "ПИН-код от карты она забыла, пришлось идти в отделение."),
    ("lookalike", "Паспорт Пети нужно поменять в 45 лет, то есть в следующем году."),
    ("lookalike", "Сменил пароль от почты после подозрительного письма."),
    ("lookalike", "Номер электронного билета РЖД 70212345678901, вагон 7, место 23."),
    ("lookalike", "Заказ на Ozon № 41937288-0127, доставка в пункт выдачи на Ленина."),
    ("lookalike", "Трек-номер посылки Почты России 80085412345678, ждать в понедельник."),
    ("lookalike", "Трек посылки с AliExpress RB482910372CN, пока в Китае."),
    ("lookalike", "Горячая линия Сбербанка — 900, с городского 8 800 555-55-50."),
    ("lookalike", "ИНН ПАО Сбербанк 7707083893, КПП 773601001 — для платёжки."),
    ("lookalike", "БИК банка 044525225, корр. счёт 30101810400000000225."),
    ("lookalike", "ОГРН Сбербанка 1027700132195 нужен для анкеты поставщика."),
    ("lookalike", "Карта, заканчивающаяся на 4417, заблокирована банком."),
    ("lookalike", "В приложении номер карты отображается как 2200 **** **** 1234."),
    ("lookalike", "Серийный номер ноутбука Lenovo PF3KX9QA нужен для гарантии."),
    ("lookalike", "У папы при обновлении Windows ошибка 0x80070005."),
    ("lookalike", "Госномер машины А123ВС 77, страховка до октября."),
    ("lookalike", "Координаты дачи: 56.1123, 38.4567, съезд после заправки."),
    ("lookalike", "Код ошибки на стиральной машине E21 — засор фильтра."),
    ("lookalike", "Билет S7: номер 421 2411234567, вылет в 12:40."),
    ("lookalike", "Счёт № 1287 от 15.03.2024 на сумму 48 500 ₽ оплачен."),
    ("lookalike", "Телефон школы: +7 (495) 123-45-67, секретарь до 16:00."),
    ("lookalike", "ИНН организации ООО «Ромашка» — 7768252820, указать в договоре."),
    ("lookalike", "КПП 770101001 и ОГРН 1157746123456 поставщика взяли из счёта."),
    ("lookalike", "СНИЛС лежит в синей папке вместе со свидетельством о рождении."),
    ("lookalike", "ИНН можно узнать на сайте налоговой по паспортным данным."),
    ("lookalike", "Код из СМС не приходит — надо звонить в банк."),
    ("lookalike", "Ключ API надо будет получить в личном кабинете разработчика."),
    ("lookalike", "В документации написано TOKEN=<ваш_токен>, туда подставить свой."),
    ("lookalike", 'В конфиге заглушка api_key = "sk-xxxx", настоящий ключ у Андрея.'),
    ("lookalike", "Пароль от Госуслуг мама хранит в блокноте, сюда его не диктовала."),
    ("lookalike", "Паспорт сдали на визу, вернут через две недели."),
    ("lookalike", "Вайфай в гостинице бесплатный, пароль дают на ресепшене."),
    ("lookalike", "Сеть на даче называется Dacha_Sokolovy, пароль бабушка не помнит."),
    ("lookalike", "Номер заказа Wildberries 7718823405, вещи приедут в среду."),
    ("lookalike", "Версия Сбербанк Онлайн 15.4.0, после обновления приложение вылетает."),
    ("lookalike", "Коммит a3f9c21 сломал сборку, откатились на 36ec9c6."),
    ("lookalike", "Номер сборки 2024.03.1187 ушёл тестировщикам."),
    ("lookalike", "Серийный номер роутера Keenetic S1234567890 указан на наклейке снизу."),
    ("lookalike", "Полис ОСАГО ХХХ 0123456789 действует до 1 сентября."),
    ("lookalike", "Промокод SPRING25 даёт скидку 25% в книжном."),
    ("lookalike", "Индекс почтового отделения 119019."),
    ("lookalike", "Токен бота у Пети истёк, надо перевыпустить у BotFather."),
    ("lookalike", "Код домофона Петя пришлёт перед приездом."),
    ("lookalike", "Срок действия карты до 05/27, надо не забыть перевыпустить."),
    ("lookalike", "Лене пришёл код подтверждения, но она его никому не называет."),
    ("lookalike", "IBAN для перевода в Казахстан Айгерим пришлёт позже."),
    ("lookalike", "Поезд 752А «Ласточка» отправляется в 07:10 с Ленинградского вокзала."),
    ("lookalike", "Ключи от машины потерялись, заказали дубликат у дилера."),
    ("lookalike", "Штрихкод на упаковке 4601234567893, товар не пробивается на кассе."),
    ("lookalike", "Номер обращения в поддержку 2024-0318-5567, ответ обещали за три дня."),
    ("lookalike", "ISBN учебника по математике: 978-5-09-087654-4."),
    ("lookalike", "Ремонт стоит 12 900 ₽, мастер приедет 21.04 в 14:00."),
    ("lookalike", "Рейс SU 1402, вылет из Шереметьево, терминал B."),
    ("lookalike", "ИНН и ОГРНИП ИП Сидоровой напечатаны на чеке."),
    (
        "lookalike",
        "Хеш коммита fbec0f0363efef9651c45802b54587e28a9eee86 — там правка формы оплаты.",
    ),
    (
        "lookalike",
        "Контрольная сумма MD5 дистрибутива: 8a160d1cf407d30366a02402f6d2c624, совпала с сайтом.",
    ),
    ("lookalike", "Для двухфакторки Петя поставил Яндекс Ключ."),
    ("lookalike", "Электронный ключ от подъезда не работает, управляющая компания заменит."),
    ("lookalike", "Телефон курьера: 8 (912) 345-67-89, позвонить за час."),
    ("lookalike", "Паспортные данные для билета Петя внесёт сам на сайте."),
    ("lookalike", "Вход в Госуслуги теперь по биометрии, пароль больше не спрашивают."),
    ("lookalike", "Серийный номер счётчика воды 0123456789, показания 00345 м³."),
    ("lookalike", "Карту Мир перевыпустили, новая придёт в отделение на Пушкина."),
    ("lookalike", "Логин в дневнике у сына — ivanov_s2014, а пароль знает только классная."),
    ("lookalike", "Номер ВНЖ нужно указать в анкете, Азиз заполнит её сам."),
    (
        "lookalike",
        "He forgot his Wi-Fi password again and wants to reset the router to factory "
        "settings this weekend.",
    ),
    (
        "lookalike",
        "She asked how to make a strong password; I suggested a password manager like Bitwarden.",
    ),
    (
        "lookalike",
        "Her passport expires in March 2026, so she needs to renew it before the trip to Japan.",
    ),
    (
        "lookalike",
        "The API key goes in the .env file as OPENAI_API_KEY=<API_KEY>, never in the "
        "code, I explained.",
    ),
    (
        "lookalike",
        "The docs example shows sk-xxxx as a placeholder for the key; he will paste "
        "the real one himself.",
    ),
    (
        "lookalike",
        "The token in the tutorial was ghp_XXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXX, "
        "just a placeholder.",
    ),
    (
        "lookalike",
        "The Steam password field shows ******** and he can't remember what's behind it.",
    ),
    ("lookalike", "Paid with the card ending in 4417 at the hardware store."),
    (
        "lookalike",
        "His phone's IMEI is 350718573349431; the shop needs it for the warranty repair.",
    ),
    ("lookalike", "Laptop serial number C02XK4R7JG5H, for the insurance claim."),
    ("lookalike", "Amazon order #113-4827391-5520418 should arrive on Thursday."),
    ("lookalike", "UPS tracking number 1Z4V82E60398217735 says the parcel is out for delivery."),
    ("lookalike", "Invoice INV-2024-00873 from the printing company is overdue by two weeks."),
    ("lookalike", "Her new mobile number is +44 7700 900482."),
    (
        "lookalike",
        "Chase customer service number is 1-800-935-9935, she calls it about the mortgage.",
    ),
    ("lookalike", "The supplier's VAT number is GB 293 4817 62 and it has to be on every invoice."),
    ("lookalike", "ISBN of the textbook: 978-0-14-135932-8."),
    ("lookalike", "The barcode on the protein bar is 5901004575806."),
    ("lookalike", "Windows update fails with error 0x80070005, access denied."),
    ("lookalike", "Build 22631.3447 of Windows 11 broke his printer driver."),
    ("lookalike", "The release was tagged from commit 66a869772e63e6dd38b82200016dd788c3723d23."),
    (
        "lookalike",
        "SHA-256 checksum of the Ubuntu ISO he downloaded: "
        "d4007cf74da526f82ed3ee99cc5ef7d563921edb153fd0653110defa48954da0, and it "
        "matched.",
    ),
    (
        "lookalike",
        "His public Bitcoin address for donations is "
        "bc1q9fzgyqev98mh08vc6ccujty93gjfn5vq9rxkg7, he wants it on his website.",
    ),
    (
        "lookalike",
        "Public ETH receive address 0x13f64ad0b33bfe4ddf26c30864de2ed7cb11b09e is "
        "fine to share with clients.",
    ),
    ("lookalike", "Updated Python to 3.12.4 and Django to 5.0.6 on the work laptop."),
    ("lookalike", "The rental car's licence plate is KX72 HBN, silver Corsa."),
    ("lookalike", "Meet at 51.5072 N, 0.1276 W at noon on 14 July."),
    (
        "lookalike",
        "The Zoom meeting ID for parents' evening is 812 3456 7890; the passcode "
        "will be sent separately.",
    ),
    ("lookalike", "Promo code SUMMER25 gives 25% off at the garden centre."),
    ("lookalike", "Flight BA0117 to New York on 12 May, seat 23A by the window."),
    (
        "lookalike",
        "The router admin page is at 192.168.0.1; he'll change the default password later.",
    ),
    (
        "lookalike",
        "He set up 2FA with an authenticator app, and the backup codes are printed "
        "and locked in a drawer.",
    ),
    ("lookalike", "The bank told her they will never ask for her PIN or the CVV over the phone."),
    (
        "lookalike",
        "Her SSN card got damaged in the wash, so she'll request a replacement from the SSA.",
    ),
    (
        "lookalike",
        "The IBAN field on the form shows GBxx XXXX XXXX XXXX XXXX XX; she'll fill "
        "it in at the bank.",
    ),
    (
        "lookalike",
        "The school portal says a password must be at least 12 characters and include a symbol.",
    ),
    (
        "lookalike",
        "The error 'invalid token' appears when the session times out, so he has to log in again.",
    ),
    ("lookalike", "Hotel room 1204, check-in after 3 pm on 2024-09-18."),
    ("lookalike", "The new tyres cost 486.40 pounds including fitting."),
    ("lookalike", "The Minecraft server they play on is at 51.89.142.7:25565."),
    ("lookalike", "PS5 console serial number AJ223019804 is needed for the Sony repair form."),
    (
        "lookalike",
        "Her API key was revoked after she posted it on GitHub by accident; she "
        "generated a new one and kept it offline.",
    ),
    (
        "lookalike",
        "The Wi-Fi QR format is WIFI:T:WPA;S:<network>;P:<password>;; and he wants "
        "to print one for guests.",
    ),
    (
        "lookalike",
        "His env template has SECRET_KEY=<your-secret-key> and "
        "DATABASE_URL=postgres://user:<password>@localhost/db.",
    ),
    (
        "lookalike",
        "Her card PIN was blocked after three wrong attempts; she'll get a new one at the branch.",
    ),
    ("lookalike", "Bank of America's routing number 026009593 is printed on their public website."),
    ("lookalike", "VIN of the Tesla for the insurance quote: 5YJ3E1EA7KF317284."),
    ("lookalike", "The printer shows error code E-04 and the manual says to clean the rollers."),
    (
        "lookalike",
        "Git commit 8350b1a fixed the login bug and he wants to cherry-pick it into "
        "the release branch.",
    ),
    (
        "lookalike",
        "His public SSH key is ssh-ed25519 "
        "AAAAC3NzaC1lZDI1NTE5AAAAlQFcpSVC5ykmeaz5qOG7P6GtOpx6n/Q0HPMwki0cV6QW, "
        "already added to GitHub.",
    ),
    (
        "lookalike",
        "His PGP key ID 0x3A9F1C22 is listed on his website for anyone who wants to email him.",
    ),
    ("lookalike", "Eurostar train 9031 departs at 08:01, coach 5, seat 61."),
    (
        "lookalike",
        "The first six digits 427638 identify the issuing bank (the BIN), he was curious about it.",
    ),
    (
        "lookalike",
        "The parcel locker sent a pickup code, but she already collected the package yesterday.",
    ),
    ("lookalike", "Replacement passport photos must be 35x45 mm, she'll get them at the pharmacy."),
    (
        "lookalike",
        "The GitHub Actions secret is referenced as ${{ secrets.DEPLOY_TOKEN }} in "
        "the workflow file.",
    ),
    ("lookalike", "The child's card for the school canteen was topped up with 20 dollars."),
    ("lookalike", "Kindle firmware 5.16.21 fixed the Wi-Fi drop issue."),
    ("lookalike", "Blood pressure this morning was 128/84, pulse 72."),
    ("lookalike", "The smart lock app asks for a 6-digit code, but he hasn't set one yet."),
    ("lookalike", "Она забыла пароль от Госуслуг и восстановила его через СМС."),
    ("lookalike", "Пароль от вайфая написан на наклейке под роутером, он сам его не помнит."),
    ("lookalike", "Паспорт нужно поменять в 45 лет, у мамы это в ноябре."),
    (
        "lookalike",
        "ПИН-код от карты никому не сообщаю — так сказала бабушка после звонка мошенников.",
    ),
    ("lookalike", "Токен в примере документации — ‹ваш_токен›, настоящий он вставит сам."),
    ("lookalike", "В конфиге стоит API_KEY=<API_KEY>, реальный ключ хранится в менеджере паролей."),
    ("lookalike", "Оплатила картой, последние цифры 8832."),
    ("lookalike", "Номер карты **** **** **** 5190 — это её старая карта Альфы, она уже закрыта."),
    ("lookalike", "IMEI телефона 352879267669159 нужен для заявления о краже."),
    ("lookalike", "Серийный номер холодильника Атлант 2047 3918 5521 — для сервисного центра."),
    (
        "lookalike",
        "Электронный билет на поезд Москва — Казань № 7548 3926 1051 23, вагон 7, место 14.",
    ),
    ("lookalike", "Номер заказа на Ozon — 48291736-0027, доставка в пятницу."),
    ("lookalike", "Трек-номер посылки Почты России: 80081294631572."),
    ("lookalike", "Телефон горячей линии Сбербанка — 900 или 8 800 555-55-50."),
    ("lookalike", "Реквизиты банка для платёжки: ИНН 7707083893, КПП 773601001, БИК 044525225."),
    ("lookalike", "ОГРН ПАО Сбербанк — 1027700132195, это из публичной выписки ЕГРЮЛ."),
    ("lookalike", "ИНН работодателя, ООО «Яндекс», — 7736207543, он есть на сайте компании."),
    ("lookalike", "СНИЛС нужно принести в отдел кадров — копию, без оригинала."),
    ("lookalike", "Свой ИНН она узнала на сайте налоговой, но сюда записывать не стала."),
    ("lookalike", "Промокод VESNA15 даёт скидку 15% в магазине косметики."),
    ("lookalike", "Госномер машины соседа — К482МО 199, он перегородил выезд."),
    ("lookalike", "Координаты места для рыбалки: 56.8389, 60.6057."),
    ("lookalike", "Встреча в Zoom, идентификатор 734 2918 4406, код доступа пришлют в чате."),
    ("lookalike", "Стиралка Bosch показывает ошибку F21, мастер приедет в среду."),
    ("lookalike", "Версия приложения Госуслуг 4.21.0, после обновления всё работает."),
    ("lookalike", "После прошивки Keenetic 4.1.3 у него пропал вайфай 5 ГГц."),
    (
        "lookalike",
        "Хеш коммита, где сломалась авторизация: 8350b1a262e76e3847cf6dfa3c211112dcdce0f6.",
    ),
    (
        "lookalike",
        "Контрольная сумма SHA-256 образа: "
        "b0055784647a6e350c9ff3f19e04204e16f2c68b4e67963acad56a61937f1ba6 — совпала "
        "с сайтом.",
    ),
    (
        "lookalike",
        "Публичный адрес USDT (TRC-20) для приёма оплаты от клиентов: "
        "Tpbqnz3E8gNV1FR2zRadxTyyw6EYmYgAcj.",
    ),
    ("lookalike", "ISBN учебника по алгебре: 978-5-17-552175-8."),
    ("lookalike", "Штрихкод на упаковке лекарства: 4603249413110."),
    ("lookalike", "Ремонт телефона стоил 4 500 ₽, гарантия 90 дней."),
    ("lookalike", "Рейс SU 1402 вылетает 14.08 в 06:35 из Шереметьево, терминал B."),
    ("lookalike", "Счёт-фактура № 00000217 от 03.04.2024 на сумму 18 600 руб."),
    ("lookalike", "Её новый номер телефона +7 925 310-44-81."),
    ("lookalike", "На портале школы пароль должен быть не короче 8 символов."),
    ("lookalike", "Двухфакторку он включил, резервные коды распечатал и убрал в сейф."),
    ("lookalike", "Ключ от квартиры оставила соседке из 12-й квартиры."),
    ("lookalike", "Ключ активации Windows был на наклейке, но она стёрлась."),
    ("lookalike", "Токен авторизации истёк, поэтому приложение банка попросило войти заново."),
    ("lookalike", "Номер карты «Тройка» 3418 2207 51, её надо пополнить на 1000 ₽."),
    ("lookalike", "Бонусная карта «Пятёрочки» привязана к телефону, саму карту выбросили."),
    ("lookalike", "Гостевая сеть в школе называется School_Guest, пароль выдают у завуча."),
    ("lookalike", "Пароль от ноутбука: ******** — она не стала говорить, и правильно."),
    ("lookalike", "Вместо ключа в примере стоит sk-xxxx, он спросил, куда вставить свой."),
    ("lookalike", "Шаблон ghp_XXXX… из инструкции не работает, нужен настоящий токен с GitHub."),
    ("lookalike", "IBAN для перевода она пришлёт позже письмом."),
    (
        "lookalike",
        "Номер паспорта в анкете надо вписать в формате «серия, номер», она заполнит сама.",
    ),
    ("lookalike", "Кабинет врача 214, приём в 09:40 в четверг."),
    ("lookalike", "Анализы: гемоглобин 128 г/л, ферритин 35 нг/мл."),
    ("lookalike", "В Genshin у него 58-й ранг, UID 812345670 он показывает друзьям."),
    ("lookalike", "ТТН Новой Почты 20450812739461 — посылка едет в Киев."),
    ("lookalike", "Серийный номер ИБП APC — 3B2215X48219, гарантия до 2026 года."),
    ("lookalike", "Код домофона поменяли, новый обещали разослать жильцам."),
    ("lookalike", "Артикул товара на Wildberries 184729305, куртка размера M."),
    ("lookalike", "Лицевой счёт в детском саду 000478, квитанция приходит каждый месяц."),
    ("lookalike", "СНИЛС в анкете пишется в формате XXX-XXX-XXX YY, она уточнила у кадровика."),
    ("lookalike", "Код ошибки 403 в личном кабинете означает, что доступ запрещён."),
    ("lookalike", "Криптокошелёк он защитил паролем, а сид-фразу хранит на бумаге в сейфе."),
    ("lookalike", "Номер сборки 1С — 8.3.24.1467, бухгалтер просила обновить."),
    ("lookalike", "Карту лояльности РЖД он оформил, номер пришлёт позже."),
    (
        "lookalike",
        "User says he changed his Gmail password yesterday and doesn't want to share it.",
    ),
    ("lookalike", "Reminder: help her reset the Wi-Fi password on the new router this weekend"),
    ("lookalike", "password: ******** (he masked it on purpose)"),
    ("lookalike", "He uses a password manager (Bitwarden) and never reuses passwords"),
    ("lookalike", "The README says to put your key in OPENAI_API_KEY=sk-...your-key-here"),
    (
        "lookalike",
        "His tutorial slides use the AWS docs sample key AKIAIOSFODNN7EXAMPLE, not a real one",
    ),
    (
        "lookalike",
        "For demos he uses Stripe's documented test card 4242 4242 4242 4242, any future date",
    ),
    ("lookalike", "Amazon order #112-4839201-5527361 arrives Thursday"),
    ("lookalike", "UPS tracking number 1Z4F87W20398765412 for the parcel from Leeds"),
    ("lookalike", "His phone number is +44 7700 900123, prefers texts after 6pm"),
    ("lookalike", "IMEI of the stolen phone: 358294557016489 (already reported to the carrier)"),
    ("lookalike", "Serial number of the MacBook: C02ZK4TQMD6M, still under AppleCare"),
    ("lookalike", "Support ticket INC-2024-118734 is still open with the ISP"),
    ("lookalike", "ISBN 978-5-05-948506-0 — the book she recommended"),
    ("lookalike", "His company's VAT ID is DE298741356, printed on every invoice"),
    ("lookalike", "The bank's SWIFT/BIC code is DEUTDEFF"),
    ("lookalike", "The card ending in 4821 was charged twice for the same order"),
    ("lookalike", "Windows update fails with error code 0x80070005"),
    ("lookalike", "Got HTTP 403 from the API, then 429 after the retries"),
    ("lookalike", "Upgraded to Python 3.12.4 and Django 5.0.6 last night"),
    ("lookalike", "The regression came in with commit 854952b77c195b3b768c5b1cd498d6e22561a897"),
    (
        "lookalike",
        "SHA-256 of the ISO is "
        "3a482fa47affe6c290e25a3744883467bda6bf17bb448f373486c3b9938191ce and "
        "matches the site",
    ),
    ("lookalike", "Public calendar event id f9a72b4a-4fb5-44ea-a7a3-1ea45751719a for the meetup"),
    ("lookalike", "Meeting point 51.5072, -0.1276 around 18:30"),
    ("lookalike", "Promo code SUMMER25 gives 25% off at the bike shop until Sunday"),
    ("lookalike", "Zoom meeting ID 845 2291 0736 — no passcode needed, it's a public webinar"),
    ("lookalike", "Licence plate of his car: KY19 XWD, a grey Skoda"),
    (
        "lookalike",
        "His SSH public key (safe to share): ssh-ed25519 "
        "AAAAC3NzaC1lZDI1NTE5AAAAIXL2BscbFu9ZYi49SbIz0/516fuIKYRSPuwiPSVqx25V "
        "dan@thinkpad",
    ),
    (
        "lookalike",
        "Public donation address on his blog: bc1qsallmlxf9tkxjaye3awg7dkk6qn7rnsy84fwzc",
    ),
    (
        "lookalike",
        "Public ETH address for receiving payouts: 0xe6824acb3782b616e2628a4a869cf51cb5fc802c",
    ),
    (
        "lookalike",
        "Transaction hash "
        "0x64210177f936edc19a79a2df0c376f2538990bd772f22fb4df60f6238b74798f is "
        "confirmed on Etherscan",
    ),
    ("lookalike", "Password rules on that site: at least 12 characters, one digit, one symbol"),
    (
        "lookalike",
        "He asked what a good passphrase length is; I suggested five or more random words",
    ),
    ("lookalike", "2FA is enabled on all his accounts with a YubiKey"),
    ("lookalike", "The SMS code never arrived, so she picked the voice call option"),
    ("lookalike", "Her lucky number is 4729, it's on her football shirt"),
    ("lookalike", "Office postcode SW1A 2AA, reception on the ground floor"),
    ("lookalike", "Invoice INV-00847 for $1,240.00 is due on 30/06/2025"),
    ("lookalike", "Pinned dependency: requests==2.32.3"),
    ("lookalike", "The library Wi-Fi is called 'PublicLib-Free' and has no password"),
    ("lookalike", "In the example config, ANTHROPIC_API_KEY=<your-key> is a placeholder"),
    (
        "lookalike",
        'Template ships with password = "changeme" as a placeholder; he\'ll set a '
        "real one on deploy",
    ),
    ("lookalike", "Docs example connection string: postgres://user:password@localhost:5432/dbname"),
    (
        "lookalike",
        "He wants a regex for GitHub tokens: ghp_ followed by 36 alphanumeric characters",
    ),
    ("lookalike", "Typed the wrong PIN three times, so the bank is mailing a new card"),
    (
        "lookalike",
        "PGP key fingerprint (public): FCEA 297E A630 9B3C F373 3DF5 0518 9CF6 077C 9E43",
    ),
    ("lookalike", "JPMorgan Chase routing number 021000021 is listed publicly on their website"),
    (
        "lookalike",
        "Stripe quickstart sample publishable key pk_test_TYooMQauvdEDq54NiTphI7jx — "
        "from the docs, not his",
    ),
    (
        "lookalike",
        "The jwt.io example token "
        "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6Ikp"
        "vaG4gRG9lIiwiaWF0IjoxNTE2MjM5MDIyfQ.SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQss"
        "w5c "
        "decodes to John Doe",
    ),
    ("lookalike", "Companies House number 09446231 for his limited company"),
    ("lookalike", "He needs to renew his passport before June; appointment at 10:40 on the 3rd"),
    ("lookalike", "The song is in the key of D minor, capo on the 3rd fret"),
    (
        "lookalike",
        "Kubernetes secret db-credentials exists in namespace prod; values were not shared",
    ),
    ("lookalike", "Suggested `export GITHUB_TOKEN=$(gh auth token)` instead of pasting the token"),
    ("lookalike", "MAC address of the printer: 3C:52:82:1A:7F:09, IP 192.168.1.40"),
    (
        "lookalike",
        "SSH host key fingerprint SHA256:bBD4SPi0BQFhPetZGlEwXcY+gfiOrGbYbbSd5AMxPND "
        "matches the server",
    ),
    ("lookalike", "ASIN B0C7H1KZ4P for the headphones she wants for her birthday"),
    ("lookalike", "Test OTP in the sandbox is always 000000 according to the vendor's docs"),
    ("lookalike", "Password hint he chose is 'first pet' — the password itself wasn't given"),
    ("lookalike", "Flight BA 2491 on 14 March, seat 23C, boarding at 07:15"),
    ("lookalike", "Nonprofit's EIN 47-2918364 is printed on the donation receipt"),
    ("lookalike", "He lost his car key fob and ordered a spare from the dealer"),
    ("lookalike", "The API returned error 'invalid_api_key' — he regenerated the key himself"),
    ("lookalike", "Пользователь забыл пароль от Госуслуг, подсказал восстановить через СМС"),
    ("lookalike", "пароль: ******, сам пароль он не назвал"),
    ("lookalike", "Код из СМС так и не пришёл, он будет звонить в банк"),
    ("lookalike", "Номер заказа на Ozon: 38291047-0012, доставка в пятницу"),
    ("lookalike", "Трек-номер посылки Почты России 80082295413769"),
    ("lookalike", "Телефон мамы: +7 916 482-17-33, звонить после семи"),
    ("lookalike", "ИНН компании ООО «Ромашка»: 7792126129, КПП 779201001"),
    ("lookalike", "ОГРН организации 1177746123455, нужно для договора"),
    ("lookalike", "Реквизиты Сбербанка: БИК 044525225, корр. счёт 30101810400000000225"),
    ("lookalike", "Оплатил картой, последние 4 цифры 7068"),
    ("lookalike", "IMEI телефона 866718272457250 — для заявления в полицию о краже"),
    ("lookalike", "серийный номер холодильника: 47-0391-22817, гарантия до осени"),
    ("lookalike", "Ошибка 0xc000007b при запуске игры"),
    ("lookalike", "Сайт выдаёт 502 Bad Gateway с утра"),
    ("lookalike", "Обновился до Android 14, версия прошивки 14.0.3.0"),
    ("lookalike", "Хеш коммита с фиксом: 8c53b3c2e0e40660b2dd716687440cb663eb985c"),
    ("lookalike", "Контрольная сумма MD5 архива d41d8cd98f00b204e9800998ecf8427e совпала"),
    ("lookalike", "Координаты дачи: 55.9153, 37.4021"),
    ("lookalike", "Встреча 12.09 в 19:00 у метро Чистые пруды"),
    ("lookalike", "Цена 12 490 ₽, скидка по промокоду OSEN2024"),
    ("lookalike", "ID встречи в Телемосте: 7302 8815 4409, ссылка в календаре"),
    ("lookalike", "Госномер его машины О482КМ 750"),
    (
        "lookalike",
        "Публичный ключ для SSH (можно раздавать): ssh-rsa "
        "AAAAB3NzaC1yc2EAAAADAQABAAABgQKp/h9rP58TVA7bs/sDEiN+OjJnNzlWac6511eN8woxM+Ww"
        "MeZ4swstab2/lx "
        "oleg@home",
    ),
    (
        "lookalike",
        "Публичный адрес кошелька для донатов (TRC20): TuQKzevZmUAkKnjYkzvS1xJYPahXB9M6KJ",
    ),
    ("lookalike", "Пример из документации: API_KEY=ваш_ключ_здесь"),
    (
        "lookalike",
        "Токен Яндекса выглядит как y0_XXXXXXXX — это только формат, настоящий он не присылал",
    ),
    ("lookalike", "Пин-код он поменял, новый не называл"),
    ("lookalike", "Пароль от Wi-Fi написан на наклейке роутера, сам он его не помнит"),
    ("lookalike", "Номер паспорта нужен для визы, но он впишет его в анкету сам"),
    ("lookalike", "СНИЛС оформлен, номер пришлют в личный кабинет Госуслуг"),
    ("lookalike", "Номер карты лояльности Пятёрочки: 7789 0012 3344 5566"),
    ("lookalike", "Номер договора 45/2024-ИП от 03.04.2024"),
    ("lookalike", "Лицевой счёт за электричество 5402817733, платит до 10 числа"),
    ("lookalike", "Код ошибки на стиральной машине E21 — засор фильтра"),
    ("lookalike", "Код региона 77, код города 495"),
    ("lookalike", "Артикул на Wildberries 183920457 — это те кроссовки"),
    ("lookalike", "Почтовый индекс 119019"),
    ("lookalike", "Код подтверждения придёт на номер, который заканчивается на 33"),
    ("lookalike", "Двухфакторку он включил через приложение Google Authenticator"),
    ("lookalike", "Рейс SU 1402, вылет в 07:35, выход 24"),
    ("lookalike", "Версия приложения 3.14.2 (build 5521)"),
    ("lookalike", "Пароль должен быть не короче 8 символов — так требует сайт"),
    ("lookalike", "Он хранит пароли в KeePassXC, база лежит на флешке"),
    ("lookalike", "Кодовый замок на велосипеде сломался, купит новый"),
    ("lookalike", "Домофон не работает, курьеру надо звонить на телефон"),
    ("lookalike", "ICCID сим-карты с упаковки: 8970199240012345678, для оператора"),
    ("lookalike", "ОКПО 12345678, ОКВЭД 62.01 — из карточки предприятия"),
    ("lookalike", "Чек №0045, ФН 9960440301234567, ФД 38712 — для возврата товара"),
    (
        "lookalike",
        "Публичный ключ age для шифрования бэкапов ему: "
        "age1nm2u29ay4xcvgxjamczqvkf2mlh3r67sy4r3pgy9tlnvjlr5da0cdz3cs7",
    ),
    ("lookalike", "Тестовая карта из песочницы платёжки 5555 5555 5555 4444 — из документации"),
    ("lookalike", "В логе: token=[REDACTED], password=***"),
    ("lookalike", "Строка подключения из методички: postgresql://user:pass@host:5432/db"),
    ("lookalike", "Ключ от квартиры он оставил у соседки на третьем этаже"),
    ("lookalike", "Ключ продукта Windows он купил, но активирует сам"),
    ("lookalike", "Номер карты «Тройка» 0021345678, пополнить на 500 ₽"),
    ("lookalike", "Пароль от Wi-Fi в кафе указан на чеке, он его не сохранил"),
    ("lookalike", "Штрихкод на упаковке 4609892176389"),
    ("lookalike", "ISBN 978-5-01-306632-8, учебник по матанализу"),
    ("lookalike", "ИНН нашей бухгалтерской фирмы 7798493397, есть на сайте"),
    ("lookalike", "Вагон 7, место 23, поезд отправляется в 23:50"),
    ("lookalike", "Пароль от почты он сменил после утечки, всё в порядке"),
    ("lookalike", "Номер обращения в поддержку банка № 2024-0917-3381"),
]
