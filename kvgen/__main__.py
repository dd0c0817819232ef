from kvgen.cli import main

main()
