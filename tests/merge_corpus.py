"""A labelled corpus of proposed merges, half Russian, half English, good and bad.

Each case is the notes a model was shown (``sources``, plus unrelated ``others``) and the group it
proposed. A good merge keeps every detail and the polarity of its sources; a bad one loses a
number, date, time, name, e-mail or link, flips or drops a negation, merges notes that disagree,
names another person's note, invents a category, or is otherwise invalid. The checker must accept
no bad case and most good ones.
"""

from __future__ import annotations

from dataclasses import dataclass

Cats = str | tuple[str, ...]


@dataclass(frozen=True)
class Case:
    lang: str
    good: bool
    why: str
    sources: tuple[tuple[Cats, str], ...]
    categories: tuple[str, ...]
    content: str
    others: tuple[tuple[Cats, str], ...] = ()
    foreign_ids: tuple[int, ...] = ()
    repeat_first: bool = False


def good(lang: str, sources: list[tuple[Cats, str]], categories: Cats, content: str) -> Case:
    return Case(lang, True, "good", tuple(sources), _cats(categories), content)


def bad(
    lang: str,
    why: str,
    sources: list[tuple[Cats, str]],
    categories: Cats,
    content: str,
    **extra: object,
) -> Case:
    return Case(lang, False, why, tuple(sources), _cats(categories), content, **extra)  # type: ignore[arg-type]


def _cats(value: Cats) -> tuple[str, ...]:
    return (value,) if isinstance(value, str) else tuple(value)


EN_GOOD = [
    good(
        "en",
        [("Food", "Likes green tea"), (("Food", "Drinks"), "Likes green tea in the morning")],
        "Food",
        "Likes green tea, especially in the morning",
    ),
    good(
        "en",
        [("Style", "Prefers informal address"), ("Style", "Wants to be addressed informally")],
        "Style",
        "Prefers to be addressed informally",
    ),
    good(
        "en",
        [("Tools", "Uses pnpm, not npm"), ("Tools", "Don't suggest npm; uses pnpm")],
        "Tools",
        "Uses pnpm; don't suggest npm",
    ),
    good(
        "en",
        [("Family", "Has a daughter named Alice"), ("Family", "Daughter Alice is 7 years old")],
        "Family",
        "Has a daughter named Alice, who is 7 years old",
    ),
    good(
        "en",
        [("Home", "Lives in Berlin"), (("Home", "Places"), "Moved to Berlin in 2021")],
        "Home",
        "Lives in Berlin; moved there in 2021",
    ),
    good(
        "en",
        [
            ("Work", "Works as a backend developer at Stripe"),
            ("Work", "Backend developer at Stripe, mostly Python"),
        ],
        "Work",
        "Works as a backend developer at Stripe, mostly in Python",
    ),
    good(
        "en",
        [
            ("Schedule", "Standup every day at 9:30"),
            (("Schedule", "Work"), "Daily standup at 9:30 with the team"),
        ],
        ("Schedule", "Work"),
        "Daily standup at 9:30 with the team",
    ),
    good(
        "en",
        [
            ("Contacts", "Work email is anna@example.com"),
            ("Contacts", "Use anna@example.com for work matters"),
        ],
        "Contacts",
        "Work email is anna@example.com; use it for work matters",
    ),
    good(
        "en",
        [("Health", "Allergic to peanuts"), (("Health", "Food"), "Has a peanut allergy")],
        ("Health", "Food"),
        "Allergic to peanuts",
    ),
    good(
        "en",
        [("Food", "Is vegetarian"), ("Food", "Vegetarian, eats eggs and cheese")],
        "Food",
        "Is vegetarian; eats eggs and cheese",
    ),
    good(
        "en",
        [
            ("Travel", "Flight to Lisbon on 14 May"),
            ("Travel", "Going to Lisbon on 14 May for a conference"),
        ],
        "Travel",
        "Flight to Lisbon on 14 May, for a conference",
    ),
    good(
        "en",
        [("Language", "Prefers answers in English"), ("Language", "Answer in English, please")],
        "Language",
        "Prefers answers in English",
    ),
    good(
        "en",
        [("Pets", "Has a dog named Rex"), ("Pets", "Dog Rex is a beagle")],
        "Pets",
        "Has a dog named Rex, a beagle",
    ),
    good(
        "en",
        [
            ("Projects", "Repo at https://github.com/anna/notes"),
            ("Projects", "Her notes app lives at github.com/anna/notes"),
        ],
        "Projects",
        "Notes app repo: https://github.com/anna/notes",
    ),
    good(
        "en",
        [("Sport", "Runs 5 km on Saturdays"), ("Sport", "Saturday morning run, 5 km")],
        "Sport",
        "Runs 5 km on Saturday mornings",
    ),
    good(
        "en",
        [("Music", "Loves jazz, especially Miles Davis"), ("Music", "Big fan of Miles Davis")],
        "Music",
        "Loves jazz and is a big fan of Miles Davis",
    ),
    good(
        "en",
        [("Style", "Keep answers short"), ("Style", "Prefers short, to-the-point answers")],
        "Style",
        "Prefers short, to-the-point answers",
    ),
    good(
        "en",
        [
            ("Work", "Never schedule meetings on Fridays"),
            (("Work", "Schedule"), "No meetings on Friday"),
        ],
        "Work",
        "Never schedule meetings on Fridays",
    ),
    good(
        "en",
        [
            ("Contacts", "Phone: +1 415 555 0134"),
            ("Contacts", "Mobile +1 415 555 0134, prefers texts"),
        ],
        "Contacts",
        "Mobile +1 415 555 0134; prefers texts",
    ),
    good(
        "en",
        [("Food", "Doesn't eat pork"), ("Food", "Does not eat pork at all")],
        "Food",
        "Doesn't eat pork at all",
    ),
    good(
        "en",
        [("Family", "Sister Maria lives in Porto"), ("Family", "Maria is an architect")],
        "Family",
        "Sister Maria is an architect and lives in Porto",
    ),
    good(
        "en",
        [
            ("Tools", "Editor: VS Code with Vim keybindings"),
            ("Tools", "Uses Vim keybindings in VS Code"),
        ],
        "Tools",
        "Uses VS Code with Vim keybindings",
    ),
    good(
        "en",
        [
            ("Schedule", "Calls mum at 7 pm on Sundays"),
            (("Schedule", "Family"), "Sunday 7 pm: call with mum"),
        ],
        ("Schedule", "Family"),
        "Calls mum at 7 pm on Sundays",
    ),
    good(
        "en",
        [("Health", "Never drinks coffee after 4 pm"), ("Health", "No coffee after 4 pm")],
        "Health",
        "Never drinks coffee after 4 pm",
    ),
]

EN_BAD = [
    bad(
        "en",
        "lost time",
        [("Routine", "Wakes up at 6:30"), ("Routine", "Gets up at 6:30 on weekdays")],
        "Routine",
        "Wakes up early on weekdays",
    ),
    bad(
        "en",
        "lost year",
        [("Personal", "Birthday is 3 April"), ("Personal", "Born on 3 April 1990")],
        "Personal",
        "Birthday is 3 April",
    ),
    bad(
        "en",
        "lost name",
        [("Work", "Meeting with Oleg on Tuesday"), ("Work", "Tuesday: sync with Oleg")],
        "Work",
        "Sync meeting on Tuesday",
    ),
    bad(
        "en",
        "lost name",
        [("Family", "Sister Maria lives in Porto"), ("Family", "Maria is an architect")],
        "Family",
        "Sister is an architect and lives in Porto",
    ),
    bad(
        "en",
        "sources disagree",
        [("Food", "Doesn't like coffee"), ("Food", "Likes coffee with milk")],
        "Food",
        "Likes coffee with milk",
    ),
    bad(
        "en",
        "dropped negation",
        [("Food", "Doesn't eat pork"), ("Food", "Does not eat pork or beef")],
        "Food",
        "Eats pork and beef",
    ),
    bad(
        "en",
        "dropped negation",
        [("Personal", "Is not a morning person"), ("Personal", "Not a morning person at all")],
        "Personal",
        "Is a morning person",
    ),
    bad(
        "en",
        "flipped polarity",
        [("Food", "Likes spicy food"), ("Food", "Loves spicy food")],
        "Food",
        "Doesn't like spicy food",
    ),
    bad(
        "en",
        "foreign id",
        [("Food", "Likes green tea"), ("Food", "Likes green tea a lot")],
        "Food",
        "Likes green tea a lot",
        foreign_ids=(9001,),
    ),
    bad(
        "en",
        "invented category",
        [("Music", "Loves jazz"), ("Music", "Listens to jazz every evening")],
        "Hobbies",
        "Loves jazz and listens to it every evening",
    ),
    bad(
        "en",
        "changed e-mail",
        [("Contacts", "Email: tom@corp.io"), ("Contacts", "Work email tom@corp.io")],
        "Contacts",
        "Work email tom@corp.com",
    ),
    bad(
        "en",
        "lost link",
        [
            ("Projects", "Portfolio at https://tom.dev"),
            ("Projects", "Has a portfolio site https://tom.dev"),
        ],
        "Projects",
        "Has a portfolio site",
    ),
    bad(
        "en",
        "changed month",
        [
            ("Health", "Dentist on 12 March"),
            ("Health", "Dentist appointment on 12 March at 10:00"),
        ],
        "Health",
        "Dentist appointment on 12 April at 10:00",
    ),
    bad(
        "en",
        "changed time of day",
        [
            ("Family", "Calls mum at 7 pm on Sundays"),
            ("Family", "Sunday call with mum, 7 pm"),
        ],
        "Family",
        "Calls mum at 7 am on Sundays",
    ),
    bad(
        "en",
        "sources disagree",
        [("Food", "Hates mushrooms"), ("Food", "Likes mushrooms on pizza")],
        "Food",
        "Likes mushrooms on pizza",
    ),
    bad(
        "en",
        "sources disagree",
        [("Health", "Never drinks alcohol"), ("Health", "Drinks wine on weekends")],
        "Health",
        "Drinks wine on weekends",
    ),
    bad(
        "en",
        "secret",
        [("Home", "Home Wi-Fi is called Tomnet"), ("Home", "Wi-Fi network: Tomnet")],
        "Home",
        "Wi-Fi network Tomnet, password: hunter2x",
    ),
    bad(
        "en",
        "duplicate outside the group",
        [("Food", "Likes tea"), ("Food", "Likes tea very much")],
        "Food",
        "Likes black tea",
        others=(("Food", "Likes black tea"),),
    ),
    bad(
        "en",
        "one note only",
        [("Food", "Likes tea"), ("Food", "Likes tea very much")],
        "Food",
        "Likes tea very much",
        repeat_first=True,
    ),
    bad(
        "en",
        "lost number",
        [("Pets", "Has 2 cats"), ("Pets", "Has cats named Tom and Luna")],
        "Pets",
        "Has cats named Tom and Luna",
    ),
]

RU_GOOD = [
    good(
        "ru",
        [("Еда", "Любит зелёный чай"), ("Еда", "Пьёт зелёный чай по утрам")],
        "Еда",
        "Любит зелёный чай, пьёт его по утрам",
    ),
    good(
        "ru",
        [("Стиль", "Обращаться на ты"), ("Стиль", "Просит обращаться к нему на ты")],
        "Стиль",
        "Просит обращаться к нему на ты",
    ),
    good(
        "ru",
        [("Инструменты", "Не предлагать npm"), ("Инструменты", "Не советовать npm, только pnpm")],
        "Инструменты",
        "Не предлагать и не советовать npm, только pnpm",
    ),
    good(
        "ru",
        [("Семья", "Дочь Алиса, 7 лет"), ("Семья", "У него дочь Алиса")],
        "Семья",
        "У него дочь Алиса, ей 7 лет",
    ),
    good(
        "ru",
        [("Дом", "Живёт в Казани"), (("Дом", "Места"), "Переехал в Казань в 2020 году")],
        "Дом",
        "Живёт в Казани, переехал туда в 2020 году",
    ),
    good(
        "ru",
        [
            ("Работа", "Работает в Яндексе бэкенд-разработчиком"),
            ("Работа", "Бэкенд-разработчик в Яндексе, пишет на Go"),
        ],
        "Работа",
        "Работает бэкенд-разработчиком в Яндексе, пишет на Go",
    ),
    good(
        "ru",
        [
            ("Расписание", "Созвон каждый день в 10:00"),
            ("Расписание", "Ежедневный созвон с командой в 10:00"),
        ],
        "Расписание",
        "Ежедневный созвон с командой в 10:00",
    ),
    good(
        "ru",
        [
            ("Контакты", "Рабочая почта ivan@example.ru"),
            ("Контакты", "По работе писать на ivan@example.ru"),
        ],
        "Контакты",
        "Рабочая почта ivan@example.ru, по работе писать туда",
    ),
    good(
        "ru",
        [("Здоровье", "Аллергия на арахис"), (("Здоровье", "Еда"), "Сильная аллергия на арахис")],
        ("Здоровье", "Еда"),
        "Сильная аллергия на арахис",
    ),
    good(
        "ru",
        [("Еда", "Вегетарианец"), ("Еда", "Не ест мясо")],
        "Еда",
        "Вегетарианец, не ест мясо",
    ),
    good(
        "ru",
        [
            ("Поездки", "Летит в Стамбул 14 мая"),
            ("Поездки", "14 мая рейс в Стамбул на конференцию"),
        ],
        "Поездки",
        "14 мая летит в Стамбул на конференцию",
    ),
    good(
        "ru",
        [("Язык", "Отвечать по-русски"), ("Язык", "Предпочитает ответы на русском")],
        "Язык",
        "Предпочитает ответы на русском",
    ),
    good(
        "ru",
        [("Питомцы", "Есть кот Барсик"), ("Питомцы", "Кот Барсик, британец")],
        "Питомцы",
        "Есть кот Барсик, британец",
    ),
    good(
        "ru",
        [
            ("Проекты", "Репозиторий бота: https://gitlab.com/ivan/bot"),
            ("Проекты", "Бот лежит на gitlab.com/ivan/bot"),
        ],
        "Проекты",
        "Репозиторий бота: https://gitlab.com/ivan/bot",
    ),
    good(
        "ru",
        [("Спорт", "Бегает 5 км по субботам"), ("Спорт", "По субботам утренняя пробежка 5 км")],
        "Спорт",
        "По субботам бегает 5 км утром",
    ),
    good(
        "ru",
        [("Музыка", "Любит джаз, особенно Майлза Дэвиса"), ("Музыка", "Фанат Майлза Дэвиса")],
        "Музыка",
        "Любит джаз, фанат Майлза Дэвиса",
    ),
    good(
        "ru",
        [("Стиль", "Отвечать коротко"), ("Стиль", "Любит короткие ответы по делу")],
        "Стиль",
        "Любит короткие ответы по делу",
    ),
    good(
        "ru",
        [("Работа", "Никогда не ставить встречи на пятницу"), ("Работа", "По пятницам без встреч")],
        "Работа",
        "Никогда не ставить встречи на пятницу",
    ),
    good(
        "ru",
        [
            ("Контакты", "Телефон +7 916 123-45-67"),
            ("Контакты", "Мобильный +7 916 123-45-67, лучше писать в Telegram"),
        ],
        "Контакты",
        "Мобильный +7 916 123-45-67, лучше писать в Telegram",
    ),
    good(
        "ru",
        [("Еда", "Не ест свинину"), ("Еда", "Совсем не ест свинину")],
        "Еда",
        "Совсем не ест свинину",
    ),
    good(
        "ru",
        [("Семья", "Сестра Мария живёт в Порту"), ("Семья", "Мария — архитектор")],
        "Семья",
        "Сестра Мария — архитектор, живёт в Порту",
    ),
    good(
        "ru",
        [
            ("Инструменты", "Редактор — VS Code с раскладкой Vim"),
            ("Инструменты", "Пользуется VS Code с Vim-раскладкой"),
        ],
        "Инструменты",
        "Пользуется VS Code с раскладкой Vim",
    ),
    good(
        "ru",
        [
            ("Расписание", "Звонит маме по воскресеньям в 19:00"),
            (("Расписание", "Семья"), "Воскресенье, 19:00 — звонок маме"),
        ],
        ("Расписание", "Семья"),
        "Звонит маме по воскресеньям в 19:00",
    ),
    good(
        "ru",
        [("Здоровье", "Не пьёт кофе после 16:00"), ("Здоровье", "Никакого кофе после 16:00")],
        "Здоровье",
        "Не пьёт кофе после 16:00",
    ),
]

RU_BAD = [
    bad(
        "ru",
        "lost time",
        [("Режим", "Встаёт в 6:30"), ("Режим", "Подъём в 6:30 по будням")],
        "Режим",
        "Встаёт рано по будням",
    ),
    bad(
        "ru",
        "lost year",
        [("Личное", "День рождения 3 апреля"), ("Личное", "Родился 3 апреля 1990 года")],
        "Личное",
        "День рождения 3 апреля",
    ),
    bad(
        "ru",
        "lost name",
        [("Работа", "Встреча с Олегом во вторник"), ("Работа", "Во вторник созвон с Олегом")],
        "Работа",
        "Во вторник созвон",
    ),
    bad(
        "ru",
        "lost name",
        [("Семья", "Сестра Мария живёт в Порту"), ("Семья", "Мария — архитектор")],
        "Семья",
        "Сестра — архитектор, живёт в Порту",
    ),
    bad(
        "ru",
        "sources disagree",
        [("Еда", "Не любит кофе"), ("Еда", "Любит кофе с молоком")],
        "Еда",
        "Любит кофе с молоком",
    ),
    bad(
        "ru",
        "dropped negation",
        [("Еда", "Не ест свинину"), ("Еда", "Не ест свинину и говядину")],
        "Еда",
        "Ест свинину и говядину",
    ),
    bad(
        "ru",
        "dropped negation",
        [("Личное", "Не жаворонок"), ("Личное", "Точно не жаворонок")],
        "Личное",
        "Жаворонок",
    ),
    bad(
        "ru",
        "flipped polarity",
        [("Еда", "Любит острое"), ("Еда", "Обожает острую еду")],
        "Еда",
        "Не любит острое",
    ),
    bad(
        "ru",
        "foreign id",
        [("Еда", "Любит зелёный чай"), ("Еда", "Очень любит зелёный чай")],
        "Еда",
        "Очень любит зелёный чай",
        foreign_ids=(9002,),
    ),
    bad(
        "ru",
        "invented category",
        [("Музыка", "Любит джаз"), ("Музыка", "Слушает джаз каждый вечер")],
        "Хобби",
        "Любит джаз и слушает его каждый вечер",
    ),
    bad(
        "ru",
        "changed e-mail",
        [("Контакты", "Почта: petr@corp.ru"), ("Контакты", "Рабочая почта petr@corp.ru")],
        "Контакты",
        "Рабочая почта petr@corp.com",
    ),
    bad(
        "ru",
        "lost link",
        [
            ("Проекты", "Портфолио на https://petr.dev"),
            ("Проекты", "Есть сайт-портфолио https://petr.dev"),
        ],
        "Проекты",
        "Есть сайт-портфолио",
    ),
    bad(
        "ru",
        "changed month",
        [
            ("Здоровье", "Стоматолог 12 марта"),
            ("Здоровье", "Запись к стоматологу 12 марта в 10:00"),
        ],
        "Здоровье",
        "Запись к стоматологу 12 апреля в 10:00",
    ),
    bad(
        "ru",
        "sources disagree",
        [("Еда", "Ненавидит грибы"), ("Еда", "Любит грибы на пицце")],
        "Еда",
        "Любит грибы на пицце",
    ),
    bad(
        "ru",
        "sources disagree",
        [("Здоровье", "Никогда не пьёт алкоголь"), ("Здоровье", "Пьёт вино по выходным")],
        "Здоровье",
        "Пьёт вино по выходным",
    ),
    bad(
        "ru",
        "secret",
        [("Дом", "Домашний Wi-Fi называется Petrnet"), ("Дом", "Сеть Wi-Fi: Petrnet")],
        "Дом",
        "Сеть Wi-Fi Petrnet, пароль: qwerty123",
    ),
    bad(
        "ru",
        "duplicate outside the group",
        [("Еда", "Любит чай"), ("Еда", "Очень любит чай")],
        "Еда",
        "Любит чёрный чай",
        others=(("Еда", "Любит чёрный чай"),),
    ),
    bad(
        "ru",
        "one note only",
        [("Еда", "Любит чай"), ("Еда", "Очень любит чай")],
        "Еда",
        "Очень любит чай",
        repeat_first=True,
    ),
    bad(
        "ru",
        "lost number",
        [("Питомцы", "У неё 2 кошки"), ("Питомцы", "Кошки Мурка и Луна")],
        "Питомцы",
        "Кошки Мурка и Луна",
    ),
    bad(
        "ru",
        "dropped negation",
        [("Работа", "Не звонить до 10 утра"), ("Работа", "Не беспокоить звонками до 10 утра")],
        "Работа",
        "Звонить после 10 утра",
    ),
]

EN_MORE = [
    good(
        "en",
        [("Style", "Prefers dark mode in all apps"), ("Style", "Uses a dark theme everywhere")],
        "Style",
        "Prefers dark mode and uses a dark theme everywhere, in all apps",
    ),
    good(
        "en",
        [("Language", "Speaks Spanish and French"), ("Language", "Fluent in Spanish")],
        "Language",
        "Speaks Spanish (fluently) and French",
    ),
    good(
        "en",
        [("Style", "Doesn't want emoji in answers"), ("Style", "No emojis, please")],
        "Style",
        "Doesn't want emoji in answers",
    ),
    good(
        "en",
        [("Family", "Kids: Sam (9) and Lily (6)"), ("Family", "Has two kids, Sam and Lily")],
        "Family",
        "Has two kids: Sam (9) and Lily (6)",
    ),
    bad(
        "en",
        "lost place name",
        [("Work", "Works remotely from Tbilisi"), ("Work", "Based in Tbilisi, works remotely")],
        "Work",
        "Works remotely",
    ),
    bad(
        "en",
        "lost number",
        [("Travel", "Budget for the trip is $2000"), ("Travel", "Trip budget: 2000 USD")],
        "Travel",
        "Trip budget is about $2k",
    ),
    bad(
        "en",
        "dropped negation",
        [("Style", "Does not want reminders on weekends"), ("Style", "No reminders on weekends")],
        "Style",
        "Wants reminders on weekends",
    ),
    bad(
        "en",
        "dropped negation",
        [("Pets", "Likes cats"), ("Pets", "Is allergic to cats and can't have one")],
        "Pets",
        "Likes cats and has one",
    ),
]

RU_MORE = [
    good(
        "ru",
        [("Стиль", "Предпочитает тёмную тему"), ("Стиль", "Везде включает тёмную тему")],
        "Стиль",
        "Предпочитает тёмную тему, включает её везде",
    ),
    good(
        "ru",
        [("Язык", "Говорит по-испански и по-французски"), ("Язык", "Свободно говорит по-испански")],
        "Язык",
        "Свободно говорит по-испански, также по-французски",
    ),
    good(
        "ru",
        [("Стиль", "Не ставить эмодзи в ответах"), ("Стиль", "Без эмодзи, пожалуйста")],
        "Стиль",
        "Не ставить эмодзи в ответах",
    ),
    good(
        "ru",
        [("Семья", "Дети: Саша (9) и Лиза (6)"), ("Семья", "Двое детей, Саша и Лиза")],
        "Семья",
        "Двое детей: Саша (9) и Лиза (6)",
    ),
    bad(
        "ru",
        "lost place name",
        [
            ("Работа", "Работает удалённо из Тбилиси"),
            ("Работа", "Живёт в Тбилиси, работает удалённо"),
        ],
        "Работа",
        "Работает удалённо",
    ),
    bad(
        "ru",
        "lost number",
        [("Поездки", "Бюджет поездки 2000 долларов"), ("Поездки", "На поездку 2000 $")],
        "Поездки",
        "Бюджет поездки около двух тысяч долларов",
    ),
    bad(
        "ru",
        "dropped negation",
        [
            ("Стиль", "Не присылать напоминания по выходным"),
            ("Стиль", "Никаких напоминаний по выходным"),
        ],
        "Стиль",
        "Присылать напоминания по выходным",
    ),
    bad(
        "ru",
        "dropped negation",
        [("Питомцы", "Любит кошек"), ("Питомцы", "Аллергия на кошек, не может завести кошку")],
        "Питомцы",
        "Любит кошек и завёл кошку",
    ),
]

NUMBERS = [
    bad(
        "en",
        "changed number word",
        [("Pets", "Has two cats"), ("Pets", "Two cats: Tom and Luna")],
        "Pets",
        "Has three cats: Tom and Luna",
    ),
    bad(
        "en",
        "changed currency",
        [("Work", "Rate is €50 per hour"), ("Work", "Charges €50 an hour")],
        "Work",
        "Charges $50 per hour",
    ),
    good(
        "en",
        [("Pets", "Has two cats"), ("Pets", "Two cats: Tom and Luna")],
        "Pets",
        "Has two cats: Tom and Luna",
    ),
    good(
        "en",
        [("Work", "Rate is €50 per hour"), ("Work", "Charges €50 an hour")],
        "Work",
        "Charges €50 per hour",
    ),
    bad(
        "ru",
        "changed number word",
        [("Семья", "Двое детей"), ("Семья", "У неё двое детей, Саша и Лиза")],
        "Семья",
        "У неё трое детей, Саша и Лиза",
    ),
    bad(
        "ru",
        "changed currency",
        [("Работа", "Ставка 3000 ₽ в час"), ("Работа", "Берёт 3000 ₽ за час")],
        "Работа",
        "Берёт 3000 $ за час",
    ),
    good(
        "ru",
        [("Семья", "Двое детей"), ("Семья", "У неё двое детей, Саша и Лиза")],
        "Семья",
        "У неё двое детей, Саша и Лиза",
    ),
    good(
        "ru",
        [("Работа", "Ставка 3000 ₽ в час"), ("Работа", "Берёт 3000 ₽ за час")],
        "Работа",
        "Ставка 3000 ₽ в час",
    ),
]

#: Identical and near-identical copies (they never "disagree", even when one negates part of
#: itself), and negations of what follows only ("without X", «без X»), good and bad.
COPIES = [
    good(
        "en",
        [
            ("Food", "Prefers tea over coffee, usually green tea without sugar."),
            ("Drinks", "Prefers tea over coffee, usually green tea without sugar."),
        ],
        ("Food", "Drinks"),
        "Prefers tea over coffee, usually green tea without sugar.",
    ),
    good(
        "en",
        [
            ("Food", "prefers tea over coffee,  usually green tea without sugar"),
            ("Habits", "Prefers tea over coffee, usually green tea without sugar."),
        ],
        "Food",
        "Prefers tea over coffee, usually green tea without sugar.",
    ),
    good(
        "en",
        [("Food", "Likes tea, but not green tea"), ("Drinks", "Likes tea, but not green tea.")],
        ("Food", "Drinks"),
        "Likes tea, but not green tea.",
    ),
    good(
        "en",
        [("Food", "Drinks coffee without milk"), ("Food", "Drinks his coffee without milk")],
        "Food",
        "Drinks his coffee without milk",
    ),
    bad(
        "en",
        "disagree: without / with",
        [("Food", "Drinks coffee without milk"), ("Food", "Drinks coffee with milk")],
        "Food",
        "Drinks coffee with milk",
    ),
    bad(
        "en",
        "disagree: only one copy denies",
        [("Food", "Likes tea, but not green tea"), ("Food", "Likes green tea")],
        "Food",
        "Likes tea, green tea too",
    ),
    bad(
        "en",
        "drops without",
        [
            ("Food", "Prefers tea, usually green tea without sugar."),
            ("Drinks", "Prefers tea, usually green tea without sugar."),
        ],
        "Food",
        "Prefers tea, usually green tea with sugar.",
    ),
    good(
        "ru",
        [
            ("Еда", "Предпочитает чай кофе, обычно зелёный чай без сахара."),
            ("Напитки", "Предпочитает чай кофе, обычно зелёный чай без сахара."),
        ],
        ("Еда", "Напитки"),
        "Предпочитает чай кофе, обычно зелёный чай без сахара.",
    ),
    good(
        "ru",
        [
            ("Еда", "предпочитает чай кофе,  обычно зелёный чай без сахара"),
            ("Привычки", "Предпочитает чай кофе, обычно зелёный чай без сахара."),
        ],
        "Еда",
        "Предпочитает чай кофе, обычно зелёный чай без сахара.",
    ),
    good(
        "ru",
        [("Еда", "Любит чай, но не зелёный"), ("Напитки", "Любит чай, но не зелёный.")],
        ("Еда", "Напитки"),
        "Любит чай, но не зелёный.",
    ),
    good(
        "ru",
        [("Еда", "Пьёт кофе без молока"), ("Еда", "Кофе пьёт без молока")],
        "Еда",
        "Пьёт кофе без молока",
    ),
    bad(
        "ru",
        "disagree: без / с",
        [("Еда", "Пьёт кофе без молока"), ("Еда", "Пьёт кофе с молоком")],
        "Еда",
        "Пьёт кофе с молоком",
    ),
    bad(
        "ru",
        "disagree: only one copy denies",
        [("Еда", "Любит чай, но не зелёный"), ("Еда", "Любит зелёный чай")],
        "Еда",
        "Любит чай, и зелёный тоже",
    ),
    bad(
        "ru",
        "drops без",
        [
            ("Еда", "Обычно пьёт зелёный чай без сахара."),
            ("Напитки", "Обычно пьёт зелёный чай без сахара."),
        ],
        "Еда",
        "Обычно пьёт зелёный чай с сахаром.",
    ),
]

CASES: list[Case] = NUMBERS + EN_GOOD + EN_BAD + EN_MORE + RU_GOOD + RU_BAD + RU_MORE + COPIES
