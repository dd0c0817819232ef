from kvgen.app.launch import main

main()
