"""How often Docent's decoder reads a legacy-encoded text file exactly, over real prose.

    python -m tests.encodings

The set: prose in 29 languages, each in every encoding of ENCODINGS that can hold it (the pairs
`str.encode` refuses are skipped), once as a few sentences (Article 1 of the Universal Declaration
of Human Rights and the opening lines of a public-domain work, or a short passage of the UDHR)
and once as a single sentence, the hard case: a short file gives the judgement little evidence.
Punctuation is ASCII, so a text fits every code page of its language; Romanian is written with
the cedilla letters ş and ţ, as its legacy code pages held it.

A case is *decidable* when no other encoding of ENCODINGS reads its bytes as the same text: pure
ASCII, or Danish whose bytes are identical in Latin-1 and Windows-1252, can be read right under
either label, so which one the decoder names cannot be judged. Such cases are counted apart, and
their text is still compared: a decoder that reads them as another language's letters is wrong.
"""

from __future__ import annotations

import sys
from collections import Counter
from dataclasses import dataclass

from app.documents.textcodec import NotTextError, decode_text

ENCODINGS = (
    "latin-1",
    "cp1252",
    "cp1250",
    "iso-8859-2",
    "cp1251",
    "iso-8859-5",
    "koi8-r",
    "cp1253",
    "iso-8859-7",
    "cp1254",
    "iso-8859-9",
    "gb18030",
    "big5",
    "shift_jis",
    "euc-kr",
)

# language: (a few sentences, one sentence)
TEXTS: dict[str, tuple[str, str]] = {
    "danish": (
        "Alle mennesker er født frie og lige i værdighed og rettigheder. De er udstyret med "
        "fornuft og samvittighed, og de bør handle mod hverandre i en broderskabets ånd. "
        "Det var så dejligt ude på landet; det var sommer, kornet stod gult, havren grøn, høet "
        "var rejst i stakke nede i de grønne enge, og der gik storken på sine lange, røde ben og "
        "snakkede ægyptisk, for det sprog havde han lært af sin moder.",
        "Alle mennesker er født frie og lige i værdighed og rettigheder.",
    ),
    "norwegian": (
        "Alle mennesker er født frie og med samme menneskeverd og menneskerettigheter. De er "
        "utstyrt med fornuft og samvittighet og bør handle mot hverandre i brorskapets ånd. "
        "Ja, vi elsker dette landet, som det stiger frem, furet, værbitt over vannet, med de "
        "tusen hjem.",
        "Alle mennesker er født frie og med samme menneskeverd og menneskerettigheter.",
    ),
    "swedish": (
        "Alla människor är födda fria och lika i värde och rättigheter. De har utrustats med "
        "förnuft och samvete och bör handla gentemot varandra i en anda av broderskap. Du gamla, "
        "du fria, du fjällhöga nord, du tysta, du glädjerika sköna!",
        "Alla människor är födda fria och lika i värde och rättigheter.",
    ),
    "finnish": (
        "Kaikki ihmiset syntyvät vapaina ja tasavertaisina arvoltaan ja oikeuksiltaan. Heille on "
        "annettu järki ja omatunto, ja heidän on toimittava toisiaan kohtaan veljeyden hengessä. "
        "Jukolan talo, eteläisessä Hämeessä, seisoo erään mäen pohjoisella rinteellä, liki "
        "Toukolan kylää.",
        "Kaikki ihmiset syntyvät vapaina ja tasavertaisina arvoltaan ja oikeuksiltaan.",
    ),
    "icelandic": (
        "Hver maður er borinn frjáls og jafn öðrum að virðingu og réttindum. Menn eru gæddir "
        "vitsmunum og samvisku, og ber þeim að breyta bróðurlega hverjum við annan. Mörður hét "
        "maður, er kallaður var gígja. Hann var sonur Sighvats hins rauða.",
        "Hver maður er borinn frjáls og jafn öðrum að virðingu og réttindum.",
    ),
    "german": (
        "Alle Menschen sind frei und gleich an Würde und Rechten geboren. Sie sind mit Vernunft "
        "und Gewissen begabt und sollen einander im Geist der Brüderlichkeit begegnen. Als "
        "Gregor Samsa eines Morgens aus unruhigen Träumen erwachte, fand er sich in seinem Bett "
        "zu einem ungeheueren Ungeziefer verwandelt.",
        "Alle Menschen sind frei und gleich an Würde und Rechten geboren.",
    ),
    "dutch": (
        "Alle mensen worden vrij en gelijk in waardigheid en rechten geboren. Zij zijn begiftigd "
        "met verstand en geweten, en behoren zich jegens elkander in een geest van broederschap "
        "te gedragen. Ik ben makelaar in koffie, en woon op de Lauriergracht, No. 37.",
        "Alle mensen worden vrij en gelijk in waardigheid en rechten geboren.",
    ),
    "french": (
        "Tous les êtres humains naissent libres et égaux en dignité et en droits. Ils sont doués "
        "de raison et de conscience et doivent agir les uns envers les autres dans un esprit de "
        "fraternité. En 1815, M. Charles-François-Bienvenu Myriel était évêque de Digne.",
        "Tous les êtres humains naissent libres et égaux en dignité et en droits.",
    ),
    "spanish": (
        "Todos los seres humanos nacen libres e iguales en dignidad y derechos y, dotados como "
        "están de razón y conciencia, deben comportarse fraternalmente los unos con los otros. "
        "En un lugar de la Mancha, de cuyo nombre no quiero acordarme, no ha mucho tiempo que "
        "vivía un hidalgo de los de lanza en astillero, adarga antigua, rocín flaco y galgo "
        "corredor.",
        "En un lugar de la Mancha, de cuyo nombre no quiero acordarme, no ha mucho tiempo que "
        "vivía un hidalgo.",
    ),
    "catalan": (
        "Tots els éssers humans neixen lliures i iguals en dignitat i en drets. Són dotats de raó "
        "i de consciència, i han de comportar-se fraternalment els uns amb els altres.",
        "Són dotats de raó i de consciència.",
    ),
    "portuguese": (
        "Todos os seres humanos nascem livres e iguais em dignidade e em direitos. Dotados de "
        "razão e de consciência, devem agir uns para com os outros em espírito de fraternidade. "
        "Uma noite destas, vindo da cidade para o Engenho Novo, encontrei no trem da Central um "
        "rapaz aqui do bairro, que eu conheço de vista e de chapéu.",
        "Dotados de razão e de consciência, devem agir uns para com os outros em espírito de "
        "fraternidade.",
    ),
    "italian": (
        "Tutti gli esseri umani nascono liberi ed eguali in dignità e diritti. Essi sono dotati "
        "di ragione e di coscienza e devono agire gli uni verso gli altri in spirito di "
        "fratellanza. Nel mezzo del cammin di nostra vita mi ritrovai per una selva oscura, ché "
        "la diritta via era smarrita.",
        "Tutti gli esseri umani nascono liberi ed eguali in dignità e diritti.",
    ),
    "polish": (
        "Wszyscy ludzie rodzą się wolni i równi pod względem swej godności i swych praw. Są oni "
        "obdarzeni rozumem i sumieniem i powinni postępować wobec innych w duchu braterstwa. "
        "Litwo! Ojczyzno moja! ty jesteś jak zdrowie. Ile cię trzeba cenić, ten tylko się dowie, "
        "kto cię stracił.",
        "Wszyscy ludzie rodzą się wolni i równi pod względem swej godności i swych praw.",
    ),
    "czech": (
        "Všichni lidé rodí se svobodní a sobě rovní co do důstojnosti a práv. Jsou nadáni "
        "rozumem a svědomím a mají spolu jednat v duchu bratrství. Byl pozdní večer, první máj, "
        "večerní máj, byl lásky čas. Hrdliččin zval ku lásce hlas, kde borový zaváněl háj.",
        "Všichni lidé rodí se svobodní a sobě rovní co do důstojnosti a práv.",
    ),
    "slovak": (
        "Všetci ľudia sa rodia slobodní a sebe rovní, čo sa týka ich dôstojnosti a práv. Sú "
        "obdarení rozumom a svedomím a majú spolu jednať v bratskom duchu. Nad Tatrou sa blýska, "
        "hromy divo bijú. Zastavme ich, bratia, veď sa ony stratia, Slováci ožijú.",
        "Všetci ľudia sa rodia slobodní a sebe rovní, čo sa týka ich dôstojnosti a práv.",
    ),
    "hungarian": (
        "Minden emberi lény szabadon születik és egyenlő méltósága és joga van. Az emberek, "
        "ésszel és lelkiismerettel bírván, egymással szemben testvéri szellemben kell hogy "
        "viseltessenek. Talpra magyar, hí a haza! Itt az idő, most vagy soha! Rabok legyünk vagy "
        "szabadok? Ez a kérdés, válasszatok!",
        "Minden emberi lény szabadon születik és egyenlő méltósága és joga van.",
    ),
    "romanian": (
        "Toate fiinţele umane se nasc libere şi egale în demnitate şi în drepturi. Ele sunt "
        "înzestrate cu raţiune şi conştiinţă şi trebuie să se comporte unele faţă de altele în "
        "spiritul fraternităţii. A fost odată ca-n poveşti, a fost ca niciodată, din rude mari "
        "împărăteşti, o prea frumoasă fată.",
        "Toate fiinţele umane se nasc libere şi egale în demnitate şi în drepturi.",
    ),
    "croatian": (
        "Sva ljudska bića rađaju se slobodna i jednaka u dostojanstvu i pravima. Ona su obdarena "
        "razumom i sviješću pa jedna prema drugima trebaju postupati u duhu bratstva. Lijepa "
        "naša domovino, oj junačka zemljo mila, stare slave djedovino, da bi vazda sretna bila!",
        "Sva ljudska bića rađaju se slobodna i jednaka u dostojanstvu i pravima.",
    ),
    "slovenian": (
        "Vsi ljudje se rodijo svobodni in imajo enako dostojanstvo in enake pravice. Obdarjeni "
        "so z razumom in vestjo in bi morali ravnati drug z drugim kakor bratje. Prijatli, "
        "obrodile so trte vince nam sladko, ki nam oživlja žile, srce razjasni in oko.",
        "Prijatli, obrodile so trte vince nam sladko, ki nam oživlja žile.",
    ),
    "turkish": (
        "Bütün insanlar hür, haysiyet ve haklar bakımından eşit doğarlar. Akıl ve vicdana "
        "sahiptirler ve birbirlerine karşı kardeşlik zihniyeti ile hareket etmelidirler. Ey Türk "
        "gençliği! Birinci vazifen, Türk istiklâlini, Türk Cumhuriyetini, ilelebet muhafaza ve "
        "müdafaa etmektir.",
        "Bütün insanlar hür, haysiyet ve haklar bakımından eşit doğarlar.",
    ),
    "greek": (
        "Όλοι οι άνθρωποι γεννιούνται ελεύθεροι και ίσοι στην αξιοπρέπεια και τα δικαιώματα. "
        "Είναι προικισμένοι με λογική και συνείδηση, και οφείλουν να συμπεριφέρονται μεταξύ "
        "τους με πνεύμα αδελφοσύνης. Σε γνωρίζω από την κόψη του σπαθιού την τρομερή, σε "
        "γνωρίζω από την όψη που με βια μετράει τη γη.",
        "Όλοι οι άνθρωποι γεννιούνται ελεύθεροι και ίσοι στην αξιοπρέπεια και τα δικαιώματα.",
    ),
    "russian": (
        "Все люди рождаются свободными и равными в своем достоинстве и правах. Они наделены "
        "разумом и совестью и должны поступать в отношении друг друга в духе братства. Все "
        "счастливые семьи похожи друг на друга, каждая несчастливая семья несчастлива "
        "по-своему. Всё смешалось в доме Облонских.",
        "Все люди рождаются свободными и равными в своем достоинстве и правах.",
    ),
    "ukrainian": (
        "Всі люди народжуються вільними і рівними у своїй гідності та правах. Вони наділені "
        "розумом і совістю і повинні діяти у відношенні один до одного в дусі братерства. Як "
        "умру, то поховайте мене на могилі, серед степу широкого, на Вкраїні милій.",
        "Всі люди народжуються вільними і рівними у своїй гідності та правах.",
    ),
    "bulgarian": (
        "Всички хора се раждат свободни и равни по достойнство и права. Те са надарени с разум и "
        "съвест и следва да се отнасят помежду си в дух на братство. В тоя прохладен майски ден "
        "чорбаджи Марко, гологлав, по халат, вечеряше с челядта си на двора.",
        "Всички хора се раждат свободни и равни по достойнство и права.",
    ),
    "serbian": (
        "Сва људска бића рађају се слободна и једнака у достојанству и правима. Она су обдарена "
        "разумом и свешћу и треба једни према другима да поступају у духу братства. Пиши као "
        "што говориш, а читај као што је написано.",
        "Сва људска бића рађају се слободна и једнака у достојанству и правима.",
    ),
    "chinese (simplified)": (
        "人人生而自由，在尊严和权利上一律平等。他们赋有理性和良心，并应以兄弟关系的精神相对待。"
        "今天晚上，很好的月光。我不见他，已是三十多年；今天见了，精神分外爽快。",
        "今天晚上，很好的月光。",
    ),
    "chinese (traditional)": (
        "人人生而自由，在尊嚴和權利上一律平等。他們賦有理性和良心，並應以兄弟關係的精神相對待。"
        "道可道，非常道；名可名，非常名。無名天地之始，有名萬物之母。",
        "道可道，非常道；名可名，非常名。",
    ),
    "japanese": (
        "すべての人間は、生まれながらにして自由であり、かつ、尊厳と権利とについて平等である。"
        "人間は、理性と良心とを授けられており、互いに同胞の精神をもって行動しなければならない。"
        "吾輩は猫である。名前はまだ無い。どこで生れたかとんと見当がつかぬ。",
        "吾輩は猫である。名前はまだ無い。",
    ),
    "korean": (
        "모든 인간은 태어날 때부터 자유로우며 그 존엄과 권리에 있어 동등하다. 인간은 천부적으로 "
        "이성과 양심을 부여받았으며 서로 형제애의 정신으로 행동하여야 한다. 동해 물과 백두산이 "
        "마르고 닳도록 하느님이 보우하사 우리나라 만세.",
        "동해 물과 백두산이 마르고 닳도록 하느님이 보우하사 우리나라 만세.",
    ),
}
VARIANTS = ("sentences", "one sentence")


@dataclass(frozen=True, slots=True)
class Case:
    language: str
    variant: str
    encoding: str
    text: str
    data: bytes
    decidable: bool  # no other encoding of ENCODINGS reads `data` as `text`


@dataclass(frozen=True, slots=True)
class Result:
    case: Case
    read_as: str  # the encoding the decoder chose, or "not text"
    text: str

    @property
    def exact(self) -> bool:
        return self.text == self.case.text


@dataclass(frozen=True, slots=True)
class Measurement:
    results: list[Result]

    @property
    def decidable(self) -> list[Result]:
        return [r for r in self.results if r.case.decidable]

    @property
    def share(self) -> float:
        """The share of decidable cases decoded exactly."""
        return _share(self.decidable)

    @property
    def share_of_all(self) -> float:
        return _share(self.results)


def cases() -> list[Case]:
    found = []
    for language, texts in TEXTS.items():
        for variant, text in zip(VARIANTS, texts, strict=True):
            for encoding in ENCODINGS:
                try:
                    data = text.encode(encoding)
                except UnicodeEncodeError:
                    continue
                decidable = not any(
                    _reads_as(data, other) == text for other in ENCODINGS if other != encoding
                )
                found.append(Case(language, variant, encoding, text, data, decidable))
    return found


def measure() -> Measurement:
    results = []
    for case in cases():
        try:
            decoded = decode_text(case.data)
            results.append(Result(case, decoded.encoding, decoded.text))
        except NotTextError:
            results.append(Result(case, "not text", ""))
    return Measurement(results)


def _reads_as(data: bytes, encoding: str) -> str | None:
    try:
        return data.decode(encoding)
    except UnicodeDecodeError:
        return None


def _share(results: list[Result]) -> float:
    return sum(r.exact for r in results) / len(results) if results else 1.0


def report(measurement: Measurement) -> str:
    """A Markdown table, language and variant by encoding: ok, or what the text was read as."""
    cells: dict[tuple[str, str], dict[str, str]] = {}
    for r in measurement.results:
        cell = "ok" if r.exact else f"**{r.read_as}**"
        cell += "" if r.case.decidable else " (=)"
        cells.setdefault((r.case.language, r.case.variant), {})[r.case.encoding] = cell
    lines = [
        "| language | text | " + " | ".join(ENCODINGS) + " |",
        "|---|---|" + "---|" * len(ENCODINGS),
    ]
    for (language, variant), row in cells.items():
        lines.append(
            f"| {language} | {variant} | "
            + " | ".join(row.get(encoding, "") for encoding in ENCODINGS)
            + " |"
        )
    results, decidable = measurement.results, measurement.decidable
    exact = sum(r.exact for r in results)
    exact_decidable = sum(r.exact for r in decidable)
    undecidable = len(results) - len(decidable)
    lines += [
        "",
        "ok: decoded exactly; **x**: read as encoding x; (=): not decidable (another encoding "
        "reads the bytes as the same text); empty: the encoding cannot hold the text.",
        "",
        f"Cases: {len(results)}; exact: {exact} ({measurement.share_of_all:.1%}).",
        f"Decidable: {len(decidable)}; exact: {exact_decidable} ({measurement.share:.1%}).",
        f"Not decidable: {undecidable}; exact: {exact - exact_decidable}.",
    ]
    wrong = Counter((r.case.encoding, r.read_as) for r in results if not r.exact)
    if wrong:
        lines += ["", "Wrong, by encoding written and read as:"]
        lines += [f"- {written} read as {read}: {n}" for (written, read), n in wrong.items()]
    return "\n".join(lines)


if __name__ == "__main__":
    sys.stdout.write(report(measure()) + "\n")
