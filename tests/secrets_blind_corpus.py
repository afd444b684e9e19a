"""The blind corpus for the secrets detector: written after its rules were frozen (commit "rules
frozen here for the blind corpus", the last of this round's), by a writer who read neither the
rules nor any other corpus, and never used to change them. It is the honest figure of how the
rules generalise: when it came, 95.9% of its 145 secrets were refused and none of its 116
look-alikes. ``SECRETS`` should be refused, ``LOOK_ALIKES`` kept; every value is made up.

Seven corpora written the same way before it were each measured when they came (81.1–97.6% of
their secrets refused, 2.4–12.0% of their look-alikes), then tuned on: they are in
``tests/secrets_round_five_corpus.py``.
"""

from __future__ import annotations

SECRETS: list[tuple[str, str]] = [
    (
        "provider",
        "His AWS access key for the staging account is AKIA5YG8B4OST33QSWAN and the "
        "secret key is qY0Pm3SsminrAJeDeASlwSPTvq8WYuvoimtnvYMy.",
    ),
    (
        "provider",
        "Дала свой GitHub-токен, чтобы я помог настроить CI: "
        "ghp_KIx9fvYm9HhUFQEhrON7TFhbaxNr0Q5c8TOh",
    ),
    (
        "provider",
        "Uses this OpenAI key for her side-project chatbot: "
        "sk-proj-kcq02G61qRX-HqOz5ZDoCFvxVFhxHdSJ2EHVXwqtfWn7xYjf",
    ),
    (
        "provider",
        "Ключ Anthropic с его рабочего аккаунта, просил не терять: "
        "sk-ant-api03-_Uw0oXdHg0XFsvKK40lZgneKsY-ysS76maBKuim5xMAAUzZjk_-Aw_pPEmf6mAF"
        "0_cpkJs7oHqHzHR-iIl9UR7tqhB38tAA",
    ),
    (
        "provider",
        "Pasted the live Stripe secret for the bakery's online shop: "
        "sk_live_o94CAlMM0lwvIY9BGe9U25pwRzKH47EkqReA6AXOfe6LVJO39Rg4S0YzJMmOV5pmgY31"
        "on3iinjMMfA1P53bcRVyOEb7JcUHOex",
    ),
    (
        "provider",
        "Токен Telegram-бота для семейного чата с напоминалками: "
        "7691198589:AAJ0lgGxFwx52-GaHTfZiMaAtiv1idshNDQ",
    ),
    (
        "provider",
        "The Slack bot token for the team's standup bot is "
        "xoxb-590868323152-0502800175985-p37YdEGHeSQjI60FY1tghymk, he wants it "
        "reused for the new channel.",
    ),
    (
        "provider",
        "Ключ Google Maps API для сайта турагентства жены: AIzaSyEia7-jOKewMsNAwkifZWE08J2x6Pec0xT",
    ),
    (
        "provider",
        "SendGrid key he uses for the church newsletter: "
        "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",
    ),
    (
        "provider",
        "Для рассылки СМС клиентам салона подключил Twilio, API key "
        "SK8ba8689395254c3e68481158d96f7bd0.",
    ),
    ("provider", "GitLab personal access token for her thesis repo: glpat-DHb7RglXld0chH0m6cKz"),
    (
        "provider",
        "npm-токен для публикации её пакета с датами: npm_o2yxmrs1Op0HMoghOMGjAlGi9kkJKTCFtn5R",
    ),
    (
        "provider",
        "Gave me a Hugging Face write token so the fine-tuned model can be uploaded: "
        "hf_aJabC451JgVTd5MCVmgaxz0msMMSNNpoRM",
    ),
    (
        "provider",
        "API-ключ Yandex Cloud для его бота-переводчика: AQVNsAUWhgFwGVkTrUGvB_CcRMu9KxFz3uPnhkiB",
    ),
    (
        "provider",
        "DigitalOcean token he uses to spin up droplets: "
        "dop_v1_828ed4d6917ccbe5ef90491758e2e77407c502680d07e3a2a49f14f2da3676ac",
    ),
    (
        "provider",
        "OAuth-токен Яндекс Диска, который он скинул для настройки бэкапа фото: "
        "y0_AgAAAABCsox97ahyZHcCpGrsvXxTFQmrzDki9ZZnqrua9_qdG_7ue",
    ),
    (
        "provider",
        "Notion integration secret for her reading tracker: "
        "secret_rnShuC4UVoo7L8Tte7m9CtVwiNeKdZU6LSKPp0oW8PM",
    ),
    (
        "provider",
        "Токен Т-Инвестиций для его торгового скрипта: "
        "t.nlM3iX2Xh2MbCHlPg5jo9IneqsUPsbcyVAEzoqqfmQYlwwk8rE8_sbO7Btw9vKD44OL1XeRpwl"
        "JFvPnaP0l1kC",
    ),
    (
        "provider",
        "She's trying Groq for the podcast transcripts, key is "
        "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",
    ),
    ("provider", "Админ-токен Shopify магазина свечей: 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"),
    (
        "provider",
        "Вебхук Slack для алертов мониторинга: "
        "https://hooks.slack.com/services/T4QYHQPZI/BTOLO48TT1X/FaINmQJpfttIociFiCjmZ"
        "VUX",
    ),
    (
        "password",
        "Her Netflix password is Marigold!2291, she asked me to remember it because "
        "her mom keeps logging out.",
    ),
    (
        "password",
        "He said his laptop login password is I29j_Lf-iVCZW&uG and he keeps "
        "forgetting it after updates.",
    ),
    ("password", "Password for the shared family Google account: Pb$uWWvD#m"),
    (
        "password",
        "Her banking app password is Lemonade_Sky47, she wants a hint if she gets "
        "locked out again.",
    ),
    (
        "password",
        "The password on his work VPN is RmKqg4lLk$U right now; it rotates every 90 days.",
    ),
    ("password", "Master password for her Bitwarden vault: cello-harbor-77-Tundra"),
    ("password", "Changed his Steam password after the phishing thing, new one is Y7$C2#f8t*nW%W."),
    ("password", "pw for the kids' school portal = Dasha2011kitty (same one for both children)"),
    (
        "password",
        "Пароль от её почты на mail.ru — Ромашка_1984!, просила подсказать, если забудет.",
    ),
    ("password", "Пароль от Госуслуг у него сейчас cDf%$oOhf9!z, менял в январе."),
    (
        "password",
        "Сказал, что пароль на ноутбуке теперь _u7zUfQt!phqC8V, записать его больше некуда.",
    ),
    ("password", "Пароль к зашифрованному архиву со сканами документов: ^_%WebnfxxlQH"),
    (
        "password",
        "Новый пароль от Сбербанк Онлайн: dDV3%DZdYit8a (старый заблокировали после трёх попыток).",
    ),
    ("password", "Пароль от 1С на работе у неё 70p9sknlMZE_Vyg, админ выдал вчера."),
    ("password", "Пароль от ВКонтакте сына — Barsik2015vk, она следит за его страницей."),
    ("password", "Мастер-пароль от KeePass: зелёный-трамвай-под-дождём-42"),
    ("password", "Пароль от личного кабинета Ростелекома VH4PvOq3q9P, нужен для оплаты интернета."),
    (
        "login_pair",
        "Login for the dentist's patient portal: anna.kowalski88@gmail.com with "
        "password Tulip$ummer09.",
    ),
    ("login_pair", "His Jira credentials are user m.ortega, pass 7b-Ia@9w6o7*Q%"),
    (
        "login_pair",
        "Spotify account she shares with her sister — jenny.liu.music@outlook.com : Bl4ckb1rd!",
    ),
    (
        "login_pair",
        "Postgres connection string for his app: "
        "postgres://app:ya5RVIVjGL49ndUhderi@db.kestrel-labs.io:5432/prod",
    ),
    (
        "login_pair",
        "For the HOA website the username is oakridge_unit14 and the password is Maple-Leaf-3321.",
    ),
    ("login_pair", "Her eBay seller login: vintage_threads_kc / Xw9#pLm2Rt"),
    ("login_pair", "The office Uber Eats account is lunch.team@brightwave.co, pw Brightwave2024!"),
    (
        "login_pair",
        "FTP for the photo studio uploads — host ftp.lumenstudio.net, user "
        "lumen_upload, password k3Nf!8zQwa",
    ),
    ("login_pair", "Вход в Госуслуги: телефон +7 916 482-37-15, пароль Kotik_Vasya_1979."),
    (
        "login_pair",
        "Данные для электронного дневника дочери: логин ivanova_m2012, пароль Shkola2024!",
    ),
    ("login_pair", "Учётка в корпоративной почте: s.petrov@uralmash-invest.ru / Gh7#kLp29x"),
    (
        "login_pair",
        "Личный кабинет налоговой: логин 772385604303, пароль Nalog_2023ok — нужен "
        "для подачи 3-НДФЛ.",
    ),
    ("login_pair", "Админка сайта её салона красоты: логин admin, пароль Salon_Elena#88"),
    ("login_pair", "Аккаунт Wildberries мамы: телефон 89261534478, пароль Mama1956wb"),
    (
        "login_pair",
        "RDP на рабочий компьютер: сервер 192.168.10.25, пользователь kuznetsov.a, "
        "пароль Zima#2024vrn",
    ),
    (
        "login_pair",
        "Steam брата: логин dark_lynx_1999, пароль Lynx!9988spb — он разрешил поиграть.",
    ),
    (
        "login_pair",
        "Wordpress admin for the band's site: user drummer_mike, password Snare&Kick2020",
    ),
    ("wifi", "Home wifi is the network Nguyen_5G, password sunflower2019ranch."),
    (
        "wifi",
        "The wifi password at her parents' place is Grandma#Rose1955, she always "
        "forgets it when visiting.",
    ),
    ("wifi", "Office guest WiFi Brightwave-Guest, key bw-guest-7741-Kx"),
    ("wifi", "His WPA2 key for the home network is 8f3Kd92LmQpz; the SSID is just Ortega."),
    ("wifi", "Wi-Fi at the lake cabin: SSID LakeHouse_2G, pass Loon$Call2022"),
    ("wifi", "The Airbnb wifi is called Casa Azul and the password is azul.casa.8830"),
    (
        "wifi",
        "WiFi at grandpa's: network TP-Link_A4F2, password 40918823 (printed under the router).",
    ),
    ("wifi", "Wifi QR she pasted decodes to WIFI:T:WPA;S:Morales Family;P:tacoTuesday#44;;"),
    ("wifi", "Пароль от домашнего вайфая: Ivanovy_Home_2021"),
    ("wifi", "Wi-Fi на работе: сеть Orion-Staff, пароль Orion2024$staff"),
    ("wifi", "Сеть у бабушки называется Keenetic-7731, пароль от неё 58264917."),
    ("wifi", "Пароль от Wi-Fi в кофейне, где она работает бариста: latte_art_77"),
    ("wifi", "Домашний вайфай сменили, теперь пароль Kvartira48!moskva"),
    ("wifi", "Вайфай на даче: сеть Dacha_Sosny, ключ sosny_i_berezy_15"),
    ("wifi", "Точка доступа с его телефона — iPhone Dmitriy, пароль dimon12345qwe"),
    ("wifi", "WPA-ключ от сети MGTS_GPON_5A2C: 9cHq7LmTxe"),
    ("wifi", "Для гостей у них отдельная сеть Guest_Petrovy с паролем gosti2023"),
    (
        "otp",
        "The bank texted her verification code 799856 and she forwarded it so I "
        "could finish the transfer form.",
    ),
    (
        "otp",
        "His debit card PIN is 6329, he asked me to keep it in case he blanks at the ATM again.",
    ),
    ("otp", "Backup codes for his GitHub 2FA: 98801-56024 42165-99898 41489-81959 62349-88932"),
    (
        "otp",
        "The TOTP secret for his Coinbase authenticator is JLJJ AA37 FLLY 5GVB XRHL VF3I EIOW TNFH",
    ),
    ("otp", "Her phone unlock PIN is 112674."),
    ("otp", "Steam Guard code that just came in: 5T7QK"),
    ("otp", "SIM card PUK is 55836033 and the SIM PIN is 5403."),
    ("otp", "Her home alarm disarm code is 9504; the cleaner needs it on Wednesdays."),
    ("otp", "Dropbox recovery codes: bpim-xv3b p2j5-y85n asrh-nwsf 9g4x-5bd5"),
    ("otp", "Код из СМС от Госуслуг: 372139, он попросил ввести его за него."),
    ("otp", "ПИН-код от его карты Сбера — 2608."),
    ("otp", "ПИН от телефона дочери 0995, чтобы проверить, что она не сидит ночью в играх."),
    (
        "otp",
        "Резервные коды для входа в Яндекс ID: 89778-33568 44727-71406 46166-93227 29593-33004",
    ),
    ("otp", "Секрет для Google Authenticator от биржи: DC2XZIBIEMRB4SPDWOTYVJ4XR3PX5AJK"),
    ("otp", "Код подтверждения от Тинькофф — 602237, действует пять минут."),
    ("otp", "ПИН-код SIM-карты 9165, PUK 66190944."),
    ("otp", "Код от офисного сейфа с печатями — 082614."),
    ("otp", "Одноразовый пароль для входа в банк-клиент: 382459"),
    ("identity", "Her Social Security number is 516-50-6210, needed for the mortgage paperwork."),
    ("identity", "US passport number for his visa application: 563026409, expires 2031."),
    ("identity", "UK National Insurance number she gave for the payroll form: JT 52 71 94 C"),
    ("identity", "His Florida driver's licence number is W326-518-72-904-0."),
    ("identity", "ITIN for her freelance tax return: 912-78-4031"),
    ("identity", "Canadian SIN for the rental application: 527 193 403"),
    ("identity", "Spanish DNI for the gym contract in Valencia: 48213769L"),
    ("identity", "SSN of her husband, for the joint tax filing: 804-49-3202"),
    ("identity", "СНИЛС её мамы: 105-903-547 39"),
    ("identity", "Его ИНН 503594855736, нужен для налогового вычета за лечение."),
    (
        "identity",
        "Паспорт РФ: серия 4519 номер 387265, выдан ГУ МВД России по г. Москве в 2019 году.",
    ),
    ("identity", "СНИЛС 926-765-890 71 — просила сохранить для записи к врачу."),
    ("identity", "Личный ИНН для самозанятости: 788157432934"),
    ("identity", "Загранпаспорт сына: 75 4821936, действителен до 2033."),
    ("identity", "Номер водительского удостоверения: 99 21 604173"),
    (
        "identity",
        "СНИЛС мужа 747-195-834 47, ИНН 166275669246 — для оформления вычета на квартиру.",
    ),
    ("identity", "Паспорт серии 45 18 № 612904, дата выдачи 14.03.2018, нужен для билетов."),
    ("identity", "Полис ОМС единого образца: 7756 2309 8741 1250"),
    ("card", "Her Visa is 4276 6032 8752 8400, exp 09/27, CVV 314 — for booking the hotel."),
    ("card", "Card on file for the meal-kit subscription: 5469310812516256, expiry 11/26"),
    ("card", "His Amex: 3767 148575 64084, CID 7720"),
    ("card", "IBAN for her salary account: DE18 3417 0548 1128 0774 56"),
    ("card", "His UK current account IBAN is GB39VICW12576375110642."),
    ("card", "Backup card for PayPal: 4890 2689 8409 8770, expiry 03/28, code 552"),
    ("card", "IBAN of her own account in Amsterdam: NL05 IJGE 7366 2144 30"),
    ("card", "Mastercard 5312 9401 5971 0614, CVC 081, valid thru 07/29"),
    ("card", "Swiss IBAN he receives freelance payments on: CH42 3411 2717 3583 1529 0"),
    ("card", "Номер её карты Т-Банка: 2200 2068 4157 2149, срок 05/28."),
    ("card", "Зарплатная карта МИР: 2202 9472 0576 4107"),
    ("card", "Карта Альфы 5536 3018 5556 1019, CVC 427, до 12/27 — для оплаты курсов."),
    ("card", "Номер карты, на которую мама переводит деньги: 4147 4894 8437 4187"),
    ("card", "Карта UnionPay от Газпромбанка для поездок: 6262 0346 9491 0877"),
    ("card", "Его счёт в Казахстане, IBAN KZ55604R011407608676"),
    ("card", "Грузинский счёт в TBC: GE84TB9186223307406117"),
    ("card", "Карта 2204 1468 8158 0295, срок действия 02/30, CVV 903"),
    ("card", "Литовский IBAN для фриланса: LT41 8570 4447 8529 0583"),
    (
        "other",
        "Seed phrase for his MetaMask wallet: nurse input truck antenna noodle two "
        "tank gravity menu dawn mimic tail",
    ),
    (
        "other",
        "Her Ledger recovery phrase: hedgehog double three review empower clog two "
        "protect rescue march race range cereal dwarf abandon pitch trip detail "
        "scene odor dolphin vague toast copy",
    ),
    (
        "other",
        "Ethereum private key he pasted from his old wallet: "
        "0x88053fc3fcdceab11b9d49fc08fbf54a2989d5e52e2a3c6439edc106b45dfb81",
    ),
    (
        "other",
        "BitLocker recovery key for the work laptop: "
        "030030-358589-590458-518639-648395-149754-019052-502557",
    ),
    (
        "other",
        "Start of his server key: -----BEGIN OPENSSH PRIVATE KEY----- "
        "b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtzc2gtZWQyNTUx"
        "OQAAACAhR1jpYCTk+vT13Tk4YjfrIFX4VwjF3imz+4YzS6O8Dp",
    ),
    (
        "other",
        "age secret key for his encrypted backups: "
        "AGE-SECRET-KEY-15KHGTMUHJ8LR7G5U7KHDAQFLFW0YNL5Y3XNV9CQPAU66ZN7T8TNLCTNZEU",
    ),
    ("other", "Her 1Password Secret Key is A3-WSPKMJ-JYTBVS-K9YOS-ABCXC-L3L27-BYS25"),
    (
        "other",
        "WIF private key from his paper Bitcoin wallet: "
        "KFVVQdJvNbq3VjgcRfKy88m5yN7wp1vidNKeJ7hjxELZ9utuTet3",
    ),
    (
        "other",
        "WireGuard private key for his home VPN peer: g4nj7togMAysSC9trIqCEN14iyeUa5nUUGFRGUD24y4=",
    ),
    (
        "other",
        "JWT session token from her company's admin panel: "
        "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.kNhBhUaVmAOvEsc-0PG64-krlCNjUlyCTrPAKly"
        "RVro8r7k-hG82KoyWR3Ye.NmjZmRY_Px4s8Ok2vnRI_0u8aNPvE5reR-fgNhVz1tl",
    ),
    (
        "other",
        "Сид-фраза от кошелька Trust Wallet: tag child sight file slush double add "
        "arena sing sting cotton squeeze",
    ),
    (
        "other",
        "Фраза восстановления его Phantom: audit typical timber gesture next balcony "
        "ripple much matter solve pulp palace",
    ),
    (
        "other",
        "Приватный ключ от кошелька в сети Tron: "
        "df82a1804225f969f1a6e7c618c8fc9d640075fcc2efb086dfede1589caba552",
    ),
    ("other", "Ключ восстановления Apple ID: AMXP-1UMI-EXBS-B3NO-JVHM-4RYQ-L5EE"),
    (
        "other",
        "Мнемоника Tonkeeper (24 слова): fix maze charge spatial limit gentle "
        "connect cupboard coin lawn yellow program finish slush volcano print edit "
        "total circle mystery vintage crisp mercy month",
    ),
    (
        "other",
        "Начало приватного ключа от сервера: -----BEGIN RSA PRIVATE KEY----- "
        "MIIEowIBAAKCAQEAAFQ4lFFMTNp9E1HqNbYQV6X1X+Lngr/pzZoqZSJ0iHD9msRYZwAGPPBiURfi",
    ),
    (
        "other",
        "Ключ шифрования Fernet для его бэкапов базы: zlGr3C0_45ZT3RhWUefVbUUCAdmeX6jw0dQrfLhojC0=",
    ),
    (
        "other",
        "Сид холодного кошелька мужа, записала на всякий случай: water mind kiwi "
        "make puzzle fury renew right drum bid list unaware",
    ),
    ("other", "Кодовое слово для звонков в банк — Пломбир1987, без него оператор не отвечает."),
]

LOOK_ALIKES: list[tuple[str, str]] = [
    (
        "lookalike",
        "She changed her Netflix password yesterday and wants a reminder to update "
        "it on the living-room TV too.",
    ),
    (
        "lookalike",
        "Keeps all passwords in Bitwarden and asked me never to suggest writing them in notes.",
    ),
    ("lookalike", "He forgot his bank PIN last week and had to order a new one at the branch."),
    (
        "lookalike",
        "Asked how to rotate an API key in the AWS console without breaking the nightly jobs.",
    ),
    (
        "lookalike",
        "Her passport expires in March, so she needs to renew it before the Portugal trip.",
    ),
    (
        "lookalike",
        "The wifi at his office keeps dropping; IT says it's the access point, not the password.",
    ),
    ("lookalike", "Lost her credit card on the bus and already froze it through the banking app."),
    (
        "lookalike",
        "Wants to set up two-factor authentication on Instagram with an "
        "authenticator app instead of SMS.",
    ),
    (
        "lookalike",
        "Never reads one-time codes out over the phone since a scammer almost got her last year.",
    ),
    (
        "lookalike",
        "Needs to look up her IBAN for the new employer; it's under account details in the app.",
    ),
    ("lookalike", "Will bring his passport and driver's licence to the notary on Thursday at 10."),
    (
        "lookalike",
        "Her seed phrase is on paper in a safe deposit box; she only told me where "
        "it is, not the words.",
    ),
    ("lookalike", "Uses a YubiKey for work logins and thinks SMS codes are outdated."),
    (
        "lookalike",
        "Likes passphrases made of four random words and asked why they're stronger "
        "than short complex ones.",
    ),
    (
        "lookalike",
        "The token for the GitHub Action expired, so deploys have been failing since Monday.",
    ),
    (
        "lookalike",
        "Asked what a Social Security number is used for when opening a brokerage account.",
    ),
    ("lookalike", "Забыл пароль от Госуслуг, восстанавливал доступ через МФЦ с паспортом."),
    ("lookalike", "Просила напомнить сменить ПИН-код на новой карте до пятницы."),
    ("lookalike", "Паспорт сдала на замену после смены фамилии, новый будет готов через 10 дней."),
    ("lookalike", "Хранит все пароли в KeePassXC, база лежит на флешке в ящике стола."),
    ("lookalike", "Спрашивал, где посмотреть свой ИНН — подсказал про сервис на сайте налоговой."),
    ("lookalike", "СНИЛС дочери ещё не оформлен, собираются подать заявление через Госуслуги."),
    ("lookalike", "Не любит коды в СМС от банка, хочет перейти на подтверждение через приложение."),
    ("lookalike", "Вайфай на даче ловит плохо, думает купить усилитель сигнала."),
    ("lookalike", "Карту МИР перевыпустили из-за окончания срока, старую он разрезал."),
    ("lookalike", "Пишет бота для Telegram, токен держит в переменных окружения, а не в коде."),
    ("lookalike", "Попросил объяснить, чем приватный ключ отличается от публичного в SSH."),
    (
        "lookalike",
        "Мама путает пароли от почты и от Одноклассников и хочет завести для них блокнот.",
    ),
    (
        "lookalike",
        "Для перевода зарплаты бухгалтерия просит реквизиты счёта, он запросит справку в банке.",
    ),
    (
        "lookalike",
        "Включила двухфакторную аутентификацию в Яндекс ID после того, как взломали подругу.",
    ),
    ("lookalike", "Водительские права нужно поменять в этом году, срок истекает в августе."),
    ("lookalike", "Сид-фразу от кошелька никому не показывает, хранит на металлической пластине."),
    ("lookalike", "Her phone number is +1 (415) 728-3941; she prefers texts over calls."),
    ("lookalike", "Amazon order 112-4829301-7765123 with the stroller should arrive on Friday."),
    ("lookalike", "UPS tracking number for the returned blender: 1Z9A47W20388412271"),
    ("lookalike", "Flight confirmation K7QXZP, seat 14C, departs 06:45 from gate B12."),
    ("lookalike", "Zoom meeting ID for the Tuesday book club is 842 7710 3365."),
    ("lookalike", "The IMEI of his stolen phone is 353287116209665, the police report needs it."),
    ("lookalike", "Serial number of her MacBook for the repair ticket: C02ZK1XQMD6T"),
    ("lookalike", "The book she recommended has ISBN 978-0-593-31831-7."),
    ("lookalike", "Error code 0x80070643 keeps showing up during Windows Update on her desktop."),
    ("lookalike", "Project runs on Python 3.11.7 and Django 4.2.11, upgrade planned for May."),
    (
        "lookalike",
        "The regression came in with commit 0445a3577e18a0a5abcca95bf8e2f8559f823cde "
        "on the main branch.",
    ),
    ("lookalike", "New address: 2417 Larchmont Ave, Apt 5B, Portland, OR 97214."),
    ("lookalike", "Promo code SPRING25 gives 25% off the first month at the yoga studio."),
    ("lookalike", "His car's licence plate is 7XKR284, a grey Corolla."),
    (
        "lookalike",
        "The cabin's coordinates are 44.2619, -72.5806 — the GPS sends people down the wrong road.",
    ),
    ("lookalike", "Paid $1,249.99 for the sofa, delivery window 2025-04-18 between 9 and 13."),
    ("lookalike", "Invoice INV-2024-00871 from the accountant is due on the 15th."),
    ("lookalike", "Support case #48213977 about the broken dishwasher is still open."),
    ("lookalike", "UPC on the protein powder tub she likes: 810028290129"),
    ("lookalike", "The VIN on the used car he's considering is 2T1BURHE0JC043821."),
    ("lookalike", "Hotel booking reference 5839201746, room 1408, check-in after 3 pm."),
    (
        "lookalike",
        "Wire instructions only need the bank's SWIFT code DEUTDEFF and the beneficiary name.",
    ),
    (
        "lookalike",
        "His public GPG key fingerprint is E5DA EEA9 213C 38F2 47C4 5576 E85D 6827 "
        "2726 B12D, he publishes it on his site.",
    ),
    (
        "lookalike",
        "The SHA-256 of the downloaded ISO matched: "
        "d77b6c29163d00d68df6db75d0c3f7eb9340051e467ab4a36ee0987b3544242b",
    ),
    ("lookalike", "The office main line is +44 20 7946 0321, extension 214 for accounts."),
    ("lookalike", "Dentist appointment on 12 March at 14:30, clinic is on 5th Street."),
    ("lookalike", "Her logo uses the hex colours #3A7BD5 and #F4A259."),
    (
        "lookalike",
        "Customer number 3008441792 at the electricity company, for submitting meter readings.",
    ),
    (
        "lookalike",
        "Her employee ID badge number is E-20417; reception asks for it at the front desk.",
    ),
    ("lookalike", "The Postgres server listens on port 5432 and runs version 15.4."),
    (
        "lookalike",
        "Her new Pixel's IMEI 354056117229710 is registered with the carrier for the trade-in.",
    ),
    ("lookalike", "Library hold for ISBN 978-1-74316-279-8 is ready for pickup until Saturday."),
    (
        "lookalike",
        "The parcel from Shenzhen has tracking number LZ730155495CN and is stuck in customs.",
    ),
    ("lookalike", "Train leaves at 17:52 from platform 9, coach C, seats 41 and 42."),
    ("lookalike", "Asked the landlord for a receipt for rent of $2,150 paid on 1 June 2025."),
    (
        "lookalike",
        "He asked whether a PIN and a password are the same thing for logging into his new router.",
    ),
    ("lookalike", "Телефон мастера по ремонту стиралки: +7 (921) 384-52-17, звонить после 10."),
    ("lookalike", "Номер заказа на Озоне 48213977-0128, привезут в пункт выдачи в среду."),
    ("lookalike", "Трек-номер посылки Почты России: RA482103760RU"),
    (
        "lookalike",
        "Реквизиты ООО «Северный ветер» для договора: ИНН 7752618325, КПП 775201001, "
        "ОГРН 1157746382914.",
    ),
    ("lookalike", "Для оплаты через банк нужен БИК 044525225 и корр. счёт 30101810400000000225."),
    ("lookalike", "IMEI её телефона 867695045428702 — нужен для гарантийного ремонта."),
    ("lookalike", "Серийный номер холодильника для вызова мастера: BRF2409N7731"),
    ("lookalike", "ISBN учебника, который просил найти: 978-5-00115-437-2"),
    (
        "lookalike",
        "При загрузке Windows вылетает ошибка 0x0000007B, он уже пробовал безопасный режим.",
    ),
    ("lookalike", "Госномер его машины К742МР 197, белая Kia Rio."),
    ("lookalike", "Координаты места встречи: 55.7539, 37.6208."),
    ("lookalike", "Рейс SU 1482, вылет в 07:40 из Шереметьево, терминал B."),
    ("lookalike", "Ремонт ванной обошёлся в 48 500 ₽, предоплата 10 000 ₽ уже внесена."),
    ("lookalike", "Промокод SKIDKA15 на первую доставку продуктов."),
    ("lookalike", "Номер электронного билета РЖД 74512938847163, вагон 7, место 23."),
    ("lookalike", "Договор аренды № 17/04-2024 от 17.04.2024, срок — одиннадцать месяцев."),
    ("lookalike", "Штрихкод карты лояльности Пятёрочки: 2775093418824"),
    ("lookalike", "Лицевой счёт за электричество 5401873265, оплатить до 10-го числа."),
    (
        "lookalike",
        "Номер обращения в поддержку Сбера: 240315-778421, ответ обещали в течение трёх дней.",
    ),
    (
        "lookalike",
        "Версия приложения 5.12.3 (сборка 48117), баг воспроизводится только на Android.",
    ),
    ("lookalike", "Всё сломалось после коммита f7f73ed, он хочет его откатить."),
    ("lookalike", "Адрес для доставки: 620014, Екатеринбург, ул. Малышева, 51, кв. 12."),
    ("lookalike", "ИНН её работодателя ООО «Альфа-Строй» — 7805366152, нужен для справки 2-НДФЛ."),
    ("lookalike", "Артикул кроссовок на Wildberries: 148822610, размер 42."),
    ("lookalike", "Счёт-фактура № 00218 от 03.02.2025 на сумму 36 400 ₽."),
    ("lookalike", "Встреча в Телемосте, номер конференции 4821 5593 0017, в 11:00."),
    ("lookalike", "Серийный номер ноутбука Lenovo для гарантии: PF3KX9ZT"),
    ("lookalike", "Полис ОСАГО ХХХ 0387456123 действует до 14 октября."),
    ("lookalike", "Дом 14, подъезд 3, этаж 7, квартира 112 — курьеру нужно позвонить заранее."),
    ("lookalike", "ОГРНИП её мастерской 319774600182343, указан на сайте и в чеках."),
    ("lookalike", "Штрихкод на упаковке детской смеси: 4607025143314"),
    ("lookalike", "Код ошибки E-203 на стиральной машине, в инструкции написано про слив."),
    ("lookalike", "Давление утром 128/84, пульс 72, температура 36.8."),
    ("lookalike", "Номер квитанции химчистки 00731, забрать пальто после 18:00."),
    ("lookalike", "Штрихкод на банке краски для детской: 4604819072652, цвет «слоновая кость»."),
    ("lookalike", "Прививка назначена на 22.09 в 9:15, кабинет 214, поликлиника № 3."),
    ("lookalike", "The card ending in ****4821 is the one she uses for groceries."),
    (
        "lookalike",
        "Told him to put OPENAI_API_KEY=<your-key-here> in the .env file and never "
        "paste the real one.",
    ),
    ("lookalike", "The logs he pasted show password: [REDACTED], which is what we wanted."),
    ("lookalike", "Her saved card shows as **** **** **** 7719 in the checkout page."),
    (
        "lookalike",
        "The docker-compose file references ${STRIPE_SECRET_KEY}, the value lives in the vault.",
    ),
    ("lookalike", "The screenshot had the IBAN masked as DE** **** **** **** **** 56."),
    ("lookalike", "Карта **** 5521 привязана к Яндекс Go, другую он пока не добавлял."),
    ("lookalike", "В логах вместо токена стоит [REDACTED], так и задумано."),
    ("lookalike", "В .env у него строка BOT_TOKEN=<токен_бота>, настоящий токен он не присылал."),
    ("lookalike", "На скриншоте пароль скрыт как ********, он специально так сделал."),
    ("lookalike", "В шаблоне договора стоит ИНН: ____________, заполнит от руки."),
    ("lookalike", "Номер паспорта в заявке указан как XXXX XXXXXX, она введёт его сама на сайте."),
]
