# A Qt 5 form for acu's tests: a line edit named "Value" and a "Submit"
# button (or Return in the entry). Submit prints the line edit's text on a line of its own and
# clears it, so a test reads what the application itself received.
import sys

from PyQt5.QtCore import QCoreApplication
from PyQt5.QtWidgets import QApplication, QLineEdit, QPushButton, QVBoxLayout, QWidget

sys.stdout.reconfigure(encoding="utf-8")
QCoreApplication.setApplicationName("acu-qtform")
# Qt keeps argv: it must outlive the application (a temporary list makes
# the accessibility bridge read freed memory and crash).
ARGV = ["acu-qtform"]
app = QApplication(ARGV)
win = QWidget()
win.setWindowTitle(sys.argv[1] if len(sys.argv) > 1 else "Acu Qt Form")
layout = QVBoxLayout(win)
entry = QLineEdit()
entry.setAccessibleName("Value")
button = QPushButton("Submit")


def submit():
    print(entry.text(), flush=True)
    entry.clear()


button.clicked.connect(submit)
entry.returnPressed.connect(submit)
layout.addWidget(entry)
layout.addWidget(button)
win.resize(500, 100)
win.show()
entry.setFocus()
sys.exit(app.exec_())
