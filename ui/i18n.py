"""The interface's language: Qt translators chosen from the settings (or DOCENT_LANGUAGE), else
from the system's locale. Docent's own strings come from the catalogue in resources/i18n (`make
translations` builds it from the tr() strings), Qt's standard buttons and menus from Qt's."""

from __future__ import annotations

import os
import sys
from importlib import resources

from PySide6.QtCore import QCoreApplication, QLibraryInfo, QLocale, QTranslator

# The settings' choices besides "system"; English is the source text and needs no catalogue.
TRANSLATED = ("zh_CN",)
ENVIRONMENT = "DOCENT_LANGUAGE"  # overrides the setting: tests and screenshots pick a language


def chosen_language(setting: str, system: QLocale | None = None) -> str:
    """The language the interface speaks: "en" or one of TRANSLATED."""
    language = os.environ.get(ENVIRONMENT) or setting
    if language != "system":
        return language if language in TRANSLATED else "en"
    locale = system or QLocale.system()
    # Chinese in simplified characters (mainland China, Singapore); Traditional stays English.
    simplified = locale.script() != QLocale.Script.TraditionalChineseScript
    return "zh_CN" if locale.language() == QLocale.Language.Chinese and simplified else "en"


def install_translators(app: QCoreApplication, setting: str) -> list[QTranslator]:
    """Install the chosen language's catalogues on `app` (none for English); they are children
    of `app`, so they live as long as it does."""
    language = chosen_language(setting)
    if language == "en":
        return []
    ours = QTranslator(app)
    catalogue = resources.files("resources").joinpath("i18n", f"docent_{language}.qm")
    if not ours.load(str(catalogue)):  # a broken install: start in English rather than not
        print(f"docent: cannot load the {language} translation ({catalogue})", file=sys.stderr)
        return []
    app.installTranslator(ours)
    qt = QTranslator(app)
    folder = QLibraryInfo.path(QLibraryInfo.LibraryPath.TranslationsPath)
    if not qt.load(f"qtbase_{language}", folder):  # missing from a trimmed package: Qt's
        return [ours]  # own few words (a line edit's menu) stay English
    app.installTranslator(qt)
    return [ours, qt]
